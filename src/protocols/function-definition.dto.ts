import { IsBoolean, IsOptional, IsString, Matches } from 'class-validator';
import { IsPlainObject } from './validation/custom-validators.js';

/**
 * A function tool's definition as both OpenAI APIs spell it: nested under `function` in Chat
 * Completions, flat beside `type` in Responses.
 */
export class FunctionDefinitionDto {
  @IsString()
  @Matches(/^[a-zA-Z0-9_.-]{1,64}$/, { message: 'function names are 1-64 letters, digits, _ . or -' })
  name!: string;

  @IsOptional()
  @IsString()
  description?: string;

  @IsOptional()
  @IsPlainObject()
  parameters?: Record<string, unknown>;

  @IsOptional()
  @IsBoolean()
  strict?: boolean;
}
