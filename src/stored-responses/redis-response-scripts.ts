import type { Redis } from 'ioredis';

// The store's writes and multi-key reads, each one Lua script: one round trip, atomic, so replicas
// never interleave. The keys and values they work on are laid out in redis-response-layout.ts.
// A script refuses a call with an error whose message holds SCRIPT_ERROR_MARK (see RedisConnection.send).

/** What marks a script's own refusal among Redis errors. */
export const SCRIPT_ERROR_MARK = 'gantry:';

/** Pushes the TTL of every key of the response, its items included. ARGV[1] is the prefix, ARGV[2] the TTL. */
const REFRESH = `
local function refresh()
  for _, itemId in ipairs(redis.call('SMEMBERS', KEYS[2])) do
    redis.call('PEXPIRE', ARGV[1] .. 'i:' .. itemId, ARGV[2])
  end
  for index = 1, 5 do redis.call('PEXPIRE', KEYS[index], ARGV[2]) end
end
local function keepItems(owner, from)
  for index = from, #ARGV, 2 do
    redis.call('SET', ARGV[1] .. 'i:' .. ARGV[index], owner .. '\\n' .. ARGV[index + 1], 'PX', ARGV[2])
    redis.call('SADD', KEYS[2], ARGV[index])
  end
end
`;

/** ARGV: prefix, ttl, id, response JSON, input JSON, previous id ('' for none), status, then item id / JSON pairs. */
const CREATE = `${REFRESH}
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5])
redis.call('HSET', KEYS[1], 'response', ARGV[4], 'input', ARGV[5], 'previous', ARGV[6], 'status', ARGV[7])
keepItems(ARGV[3], 8)
refresh()
return 1`;

/**
 * ARGV: prefix, ttl, id, response JSON, status, then item id / JSON pairs. 0 when the response is
 * not kept, 2 when its kept state is final and this one is another (see mayReplace); 1 written.
 */
const UPDATE = `${REFRESH}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local kept = redis.call('HGET', KEYS[1], 'status')
-- A record written without its status field (by a gateway that kept it in the response only): read it there.
if not kept then kept = cjson.decode(redis.call('HGET', KEYS[1], 'response')).status end
if kept ~= ARGV[5] and kept ~= 'queued' and kept ~= 'in_progress' then return 2 end
redis.call('HSET', KEYS[1], 'response', ARGV[4], 'status', ARGV[5])
keepItems(ARGV[3], 6)
refresh()
return 1`;

/**
 * ARGV: prefix, ttl, refresh slack, max events, final (1/0), channel, then sequence / event / data
 * triples. The items' TTLs are pushed only when they fell behind by the slack: an append comes
 * every turn of the event loop while a response streams, and its items do not change meanwhile.
 */
const APPEND = `${REFRESH}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local state = redis.call('HMGET', KEYS[4], 'next', 'final')
local nextSequence = tonumber(state[1]) or 0
local count = (#ARGV - 6) / 3
-- The batch's sequences run on from its first (the caller checked); events the log holds are skipped.
local skip = 0
if count > 0 then
  local first = tonumber(ARGV[7])
  if first > nextSequence then
    return redis.error_reply('ERR gantry: event sequence ' .. ARGV[7] .. ' where ' .. nextSequence .. ' was expected')
  end
  skip = math.min(nextSequence - first, count)
end
if state[2] == '1' and skip < count then return redis.error_reply('ERR gantry: the event log is closed: its final event was appended') end
for index = skip, count - 1 do
  redis.call('XADD', KEYS[3], 'MAXLEN', ARGV[4], '0-' .. (nextSequence + index - skip + 1), 'e', ARGV[8 + index * 3], 'd', ARGV[9 + index * 3])
end
local final = '0'
if state[2] == '1' or ARGV[5] == '1' then final = '1' end
redis.call('HSET', KEYS[4], 'next', nextSequence + count - skip, 'final', final)
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[2]) - tonumber(ARGV[3]) then
  refresh()
else
  for _, index in ipairs({1, 3, 4, 5}) do redis.call('PEXPIRE', KEYS[index], ARGV[2]) end
end
if count > skip or ARGV[5] == '1' then redis.call('PUBLISH', ARGV[6], 'e') end
return 1`;

/** KEYS: log state, stream. ARGV: first entry id, count. Nil when there is no log. */
const READ = `
local state = redis.call('HMGET', KEYS[1], 'next', 'final')
if not state[1] then return false end
return {state[1], state[2] or '0', redis.call('XRANGE', KEYS[2], ARGV[1], '+', 'COUNT', ARGV[2])}`;

/**
 * ARGV: prefix, max bytes, then item ids. Id / value pairs of the items found, in order, until
 * their JSON passes max bytes (a value is "<owner>\n<JSON>").
 */
const ITEMS = `
local found = {}
local bytes = 0
local limit = tonumber(ARGV[2])
for index = 3, #ARGV do
  local value = redis.call('GET', ARGV[1] .. 'i:' .. ARGV[index])
  if value then
    found[#found + 1] = ARGV[index]
    found[#found + 1] = value
    bytes = bytes + #value - string.find(value, '\\n', 1, true)
    if bytes > limit then break end
  end
end
return found`;

/** ARGV: prefix, id, channel. 1 when the response was kept. */
const REMOVE = `
local kept = redis.call('EXISTS', KEYS[1])
local mark = ARGV[2] .. '\\n'
for _, itemId in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  local key = ARGV[1] .. 'i:' .. itemId
  local value = redis.call('GET', key)
  if value and string.sub(value, 1, #mark) == mark then redis.call('DEL', key) end
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5])
redis.call('PUBLISH', ARGV[3], 'd')
return kept`;

/** KEYS: response, cancel flag. ARGV: channel. The flag lives as long as the response. */
const CANCEL = `
local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 then return 0 end
redis.call('SET', KEYS[2], '1', 'PX', ttl)
redis.call('PUBLISH', ARGV[1], 'c')
return 1`;

type ScriptCall = (...args: (string | number)[]) => Promise<unknown>;

/** The scripts, as commands of the connection they were defined on. */
export interface ResponseScripts {
  gantryCreate: ScriptCall;
  gantryUpdate: ScriptCall;
  gantryAppend: ScriptCall;
  gantryRead: ScriptCall;
  gantryItems: ScriptCall;
  gantryRemove: ScriptCall;
  gantryCancel: ScriptCall;
}

/** Defines the scripts on `redis` (sent by hash, loaded again when Redis lost them). */
export function defineResponseScripts(redis: Redis): ResponseScripts {
  for (const [name, lua, numberOfKeys] of [
    ['gantryCreate', CREATE, 5],
    ['gantryUpdate', UPDATE, 5],
    ['gantryAppend', APPEND, 5],
    ['gantryRead', READ, 2],
    ['gantryItems', ITEMS, 0],
    ['gantryRemove', REMOVE, 5],
    ['gantryCancel', CANCEL, 2],
  ] as const) {
    redis.defineCommand(name, { lua, numberOfKeys });
  }
  return redis as unknown as ResponseScripts;
}
