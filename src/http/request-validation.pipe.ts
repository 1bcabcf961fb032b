import { ValidationPipe } from '@nestjs/common';
import { GatewayError } from '../errors/gateway-error.js';
import { flattenValidationErrors } from '../errors/format-validation-errors.js';

/** A body with thousands of bad items gets a readable message, not one line per item. */
const MAX_PROBLEMS_SHOWN = 20;

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
      const shown = problems.slice(0, MAX_PROBLEMS_SHOWN).map((problem) => problem.message);
      if (problems.length > MAX_PROBLEMS_SHOWN) shown.push(`and ${problems.length - MAX_PROBLEMS_SHOWN} more problems`);
      const message = shown.length > 0 ? shown.join('; ') : 'The request body is not valid.';
      return new GatewayError('invalid_request', message, { param: problems[0]?.path });
    },
  });
}
