import { ValidationPipe } from '@nestjs/common';
import { GatewayError } from '../errors/gateway-error.js';
import { flattenValidationErrors } from '../errors/format-validation-errors.js';

/**
 * Validates request DTOs. A failure is a 400 that names every field at fault (the first one as
 * `param`), in the client's protocol shape. Unknown fields are dropped, as vLLM ignores them.
 */
export function requestValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    transform: true,
    whitelist: true,
    forbidUnknownValues: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => {
      const problems = flattenValidationErrors(errors);
      const message = problems.length > 0 ? problems.map((problem) => problem.message).join('; ') : 'The request body is not valid.';
      return new GatewayError('invalid_request', message, { param: problems[0]?.path });
    },
  });
}
