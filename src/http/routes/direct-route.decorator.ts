import type { FastifyReply, FastifyRequest } from 'fastify';

export const DIRECT_ROUTE = 'gantry:direct-route';
export const DIRECT_ROUTE_PARAMS = 'gantry:direct-route-params';

/**
 * What a direct route's handler parameter receives. Nest's pipes see a parameter of type 3 as
 * `'body'` (as @nestjs/microservices' `RpcParamtype.PAYLOAD`), and any other as `'custom'`.
 */
export enum DirectRouteParam {
  Exchange = 1,
  Body = 3,
}

/**
 * The request and its reply, as a handler gets them. Not the reply alone: Nest's pipes await a
 * thenable parameter value, and a Fastify reply is one (it settles when the response is sent).
 */
export interface HttpExchange {
  request: FastifyRequest;
  reply: FastifyReply;
}

/** One parameter's entry in the handler's parameter metadata, in the format ExternalContextCreator reads. */
interface ParamEntry {
  index: number;
  data: undefined;
  pipes: never[];
}

export interface DirectRoute {
  path: string;
  /** Runs first on each request, before the guards (a generation route attaches its telemetry). */
  onArrival?: (request: FastifyRequest) => void;
}

/**
 * Marks a provider's method as `POST {path}`, served on Fastify directly (mountDirectRoutes)
 * with Nest's guards, interceptors, pipes and exception filters, as Nest applies them outside
 * its HTTP router. The handler returns an Observable the interceptors see; it answers through
 * the reply itself (`@DirectExchange()`).
 */
export function DirectPost(path: string, onArrival?: DirectRoute['onArrival']): MethodDecorator {
  return (_target, _key, descriptor) => {
    Reflect.defineMetadata(DIRECT_ROUTE, { path, onArrival } satisfies DirectRoute, descriptor.value as object);
    return descriptor;
  };
}

/** The request body, after the pipes (global ones included): validated as the parameter's declared class. */
export const DirectBody = (): ParameterDecorator => param(DirectRouteParam.Body);

/** The HttpExchange. Nest's pipes see it too, as a `'custom'` parameter, as they see a custom decorator's value. */
export const DirectExchange = (): ParameterDecorator => param(DirectRouteParam.Exchange);

function param(type: DirectRouteParam): ParameterDecorator {
  return (target, key, index) => {
    const params = (Reflect.getMetadata(DIRECT_ROUTE_PARAMS, target.constructor, key!) ?? {}) as Record<string, ParamEntry>;
    const entry: ParamEntry = { index, data: undefined, pipes: [] };
    Reflect.defineMetadata(DIRECT_ROUTE_PARAMS, { ...params, [`${type}:${index}`]: entry }, target.constructor, key!);
  };
}
