/**
 * The Lua scripts of the sliding windows in Redis: the arithmetic of sliding-window.ts (slices of
 * a window / 60, each counting until a window has passed since its end), one hash per window
 * (field: slice index, value: what it holds), on Redis's clock so that replicas' clocks do not
 * matter. Each runs atomically: concurrent replicas never interleave a read and a write.
 */

// Shared by the scripts: `sumOf(key, windowMs, now)` drops the slices that no longer count and
// returns what the window holds, its slices oldest first, and the slice `now` falls in;
// `roomIn` is when `need` more fits under `limit` (sliding-window.ts roomInMs).
const WINDOWS = `
local function nowMs()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local function sumOf(key, windowMs, now)
  local sliceMs = windowMs / 60
  local current = math.floor(now / sliceMs)
  local oldest = current - 60
  local flat = redis.call('HGETALL', key)
  local sum = 0
  local slices = {}
  for index = 1, #flat, 2 do
    local slice = tonumber(flat[index])
    if slice < oldest then
      redis.call('HDEL', key, flat[index])
    else
      local amount = tonumber(flat[index + 1])
      sum = sum + amount
      slices[#slices + 1] = {slice, amount}
    end
  end
  table.sort(slices, function(a, b) return a[1] < b[1] end)
  return sum, slices, current, sliceMs
end
local function roomIn(sum, slices, sliceMs, windowMs, now, limit, need)
  if sum + need <= limit then return 0 end
  if need > limit then return math.ceil(windowMs + sliceMs) end
  for index = 1, #slices do
    sum = sum - slices[index][2]
    if sum + need <= limit then return math.max(1, math.ceil((slices[index][1] + 61) * sliceMs - now)) end
  end
  return math.ceil(windowMs + sliceMs)
end
local function add(key, slice, amount, windowMs)
  redis.call('HINCRBY', key, string.format('%d', slice), amount)
  redis.call('PEXPIRE', key, math.ceil(windowMs + 2 * windowMs / 60))
end
`;

// KEYS[1]: the window; ARGV: windowMs, limit. Counts one request when it fits.
// Returns {count with it, ms until room for one more}.
export const HIT = `${WINDOWS}
local windowMs = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local now = nowMs()
local sum, slices, current, sliceMs = sumOf(KEYS[1], windowMs, now)
local count = sum + 1
if count <= limit then
  add(KEYS[1], current, 1, windowMs)
  sum = count
  slices[#slices + 1] = {current, 1}
end
return {count, roomIn(sum, slices, sliceMs, windowMs, now, limit, 1)}`;

// KEYS: the budgets' windows; ARGV: prompt, maxTokens (-1: as much as left), outputCap (-1: none),
// then limit and windowMs of each budget. Holds prompt + output in each window's current slice,
// or nothing. Returns {1, output, reserved, slice1, slice2, ...} or {0, refusedBy (1-based), retryInMs}.
export const RESERVE = `${WINDOWS}
local prompt = tonumber(ARGV[1])
local asked = tonumber(ARGV[2])
local cap = tonumber(ARGV[3])
local now = nowMs()
local windows = {}
local left = math.huge
for index = 1, #KEYS do
  local limit = tonumber(ARGV[2 + 2 * index])
  local windowMs = tonumber(ARGV[3 + 2 * index])
  local sum, slices, current, sliceMs = sumOf(KEYS[index], windowMs, now)
  windows[index] = {limit = limit, windowMs = windowMs, sum = sum, slices = slices, current = current, sliceMs = sliceMs}
  left = math.min(left, limit - sum)
end
local need = prompt + 1
if asked >= 0 then need = prompt + asked end
if need > left then
  local refusedBy = 1
  local retry = 0
  for index = 1, #windows do
    local window = windows[index]
    local wait = roomIn(window.sum, window.slices, window.sliceMs, window.windowMs, now, window.limit, need)
    if wait > retry then
      refusedBy = index
      retry = wait
    end
  end
  return {0, refusedBy, math.max(1, retry)}
end
local output = asked
if asked < 0 then
  output = left - prompt
  if cap >= 0 and cap < output then output = cap end
end
local reply = {1, output, prompt + output}
for index = 1, #windows do
  add(KEYS[index], windows[index].current, prompt + output, windows[index].windowMs)
  reply[3 + index] = windows[index].current
end
return reply`;

// KEYS: the budgets' windows; ARGV: the change (used - reserved), then each window's slice.
// A slice already gone stays gone; none goes below nothing.
export const SETTLE = `
local change = tonumber(ARGV[1])
for index = 1, #KEYS do
  local slice = ARGV[index + 1]
  local held = redis.call('HGET', KEYS[index], slice)
  if held then
    local total = tonumber(held) + change
    if total > 0 then redis.call('HSET', KEYS[index], slice, total) else redis.call('HDEL', KEYS[index], slice) end
  end
end
return #KEYS`;
