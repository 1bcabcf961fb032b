import { IsBoolean, IsString, Matches } from 'class-validator';
import { IsPlainObject } from './validation/custom-validators.js';
import { Nullable, Optional } from './validation/dto-fields.js';

/** What OpenAI accepts as a function (tool) name. */
export const FUNCTION_NAME_PATTERN = /^[a-zA-Z0-9_.-]{1,64}$/;
export const FUNCTION_NAME_RULE = 'function names are 1-64 letters, digits, _ . or -';

/**
 * A function tool's definition as both OpenAI APIs spell it: nested under `function` in Chat
 * Completions, flat beside `type` in Responses.
 */
export class FunctionDefinitionDto {
  @IsString()
  @Matches(FUNCTION_NAME_PATTERN, { message: FUNCTION_NAME_RULE })
  name!: string;

  @Nullable()
  @IsString()
  description?: string;

  @Optional()
  @IsPlainObject()
  parameters?: Record<string, unknown>;

  @Nullable()
  @IsBoolean()
  strict?: boolean;
}
