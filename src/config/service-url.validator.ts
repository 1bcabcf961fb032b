import { ValidateBy, type ValidationOptions } from 'class-validator';

/**
 * A URL a part of the gateway connects to (`redis.url`): one that parses whole (WHATWG URL: a port
 * from 0 to 65535, no stray characters), with one of `protocols` and a host. A malformed one is
 * refused at load, before a client library reads it some other way. The message never quotes the
 * value: it may hold a password.
 */
export function IsServiceUrl(
  protocols: readonly string[],
  options: ValidationOptions & { message: string },
): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isServiceUrl',
      validator: { validate: (value) => typeof value === 'string' && isServiceUrl(value, protocols) },
    },
    options,
  );
}

export function isServiceUrl(text: string, protocols: readonly string[]): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  return protocols.includes(url.protocol.slice(0, -1)) && url.hostname !== '' && text.startsWith(`${url.protocol}//`);
}
