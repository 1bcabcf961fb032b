import { type CanActivate, type ExecutionContext, ForbiddenException, Injectable } from '@nestjs/common';
import { holdsCardNumber, textsOf } from './sensitive-text.js';

/**
 * A guardrail: refuses a request whose messages hold a payment card number (a digit run that
 * passes the Luhn check), or match `GUARDRAIL_PATTERN` (a regular expression, case-insensitive)
 * when that is set. Registered as an `APP_GUARD`, it runs on the generation routes after Gantry's
 * own guards (so a request without a valid API key is refused for that first), and on Nest's
 * routes as any global guard; the refusal is answered in the client's protocol, status 403.
 */
@Injectable()
export class CardNumberGuard implements CanActivate {
  private readonly pattern = process.env.GUARDRAIL_PATTERN ? new RegExp(process.env.GUARDRAIL_PATTERN, 'i') : undefined;

  canActivate(context: ExecutionContext): boolean {
    const texts = textsOf(context.switchToHttp().getRequest<{ body?: unknown }>().body);
    if (texts.some(holdsCardNumber)) {
      throw new ForbiddenException(
        'The request holds what looks like a payment card number; remove it and send again.',
      );
    }
    if (this.pattern && texts.some((text) => this.pattern!.test(text))) {
      throw new ForbiddenException('The request matches a pattern this gateway refuses.');
    }
    return true;
  }
}
