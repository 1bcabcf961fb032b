import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsNumber,
  IsOptional,
  IsString,
  Max,
  Min,
  ValidateBy,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { IsKeywordOrObject, IsPlainObject } from '../validation/custom-validators.js';
import { inputItemProblem, type ResponsesInputItem } from './responses-input.js';
import type { ResponsesToolChoice } from './responses-tool-choice.js';

export class ResponsesTextFormatDto {
  @IsIn(['text', 'json_object', 'json_schema'])
  type!: 'text' | 'json_object' | 'json_schema';

  @ValidateIf((format: ResponsesTextFormatDto) => format.type === 'json_schema')
  @IsString()
  @IsNotEmpty()
  name?: string;

  @ValidateIf((format: ResponsesTextFormatDto) => format.type === 'json_schema')
  @IsPlainObject()
  schema?: Record<string, unknown>;

  @IsOptional()
  @IsBoolean()
  strict?: boolean;
}

export class ResponsesTextDto {
  @IsOptional()
  @ValidateNested()
  @Type(() => ResponsesTextFormatDto)
  format?: ResponsesTextFormatDto;
}

export class ResponsesReasoningDto {
  @IsOptional()
  @IsIn(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'])
  effort?: string | null;

  /** Set: the reasoning also streams as a summary (Gantry has no summarizer: it is the reasoning itself). */
  @IsOptional()
  @IsIn(['auto', 'concise', 'detailed'])
  summary?: string | null;

  /** The older name of `summary`. */
  @IsOptional()
  @IsIn(['auto', 'concise', 'detailed'])
  generate_summary?: string | null;
}

/** `POST /v1/responses` (response_create_params.py). Stateless: nothing is stored. */
export class ResponsesRequestDto {
  @IsString()
  @IsNotEmpty()
  model!: string;

  @IsResponsesInput()
  input!: string | ResponsesInputItem[];

  @IsOptional()
  @IsString()
  instructions?: string;

  /** Function, custom, namespace and hosted tools; each is checked where it is read (readResponsesTools). */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(128)
  tools?: Array<Record<string, unknown>>;

  @IsOptional()
  @IsKeywordOrObject(['none', 'auto', 'required'], (value) => typeof value.type === 'string', '{"type": "function", "name": ...}')
  tool_choice?: ResponsesToolChoice;

  @IsOptional()
  @IsBoolean()
  parallel_tool_calls?: boolean;

  @IsOptional()
  @IsInt()
  @Min(1)
  max_output_tokens?: number;

  @IsOptional()
  @IsNumber()
  @Min(0)
  @Max(2)
  temperature?: number;

  @IsOptional()
  @IsNumber()
  @Min(0)
  @Max(1)
  top_p?: number;

  @IsOptional()
  @IsBoolean()
  stream?: boolean;

  @IsOptional()
  @IsBoolean()
  store?: boolean;

  /** Extra output to include; `reasoning.encrypted_content` is acted on, the others are accepted and ignored. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(32)
  @IsString({ each: true })
  include?: string[];

  @IsOptional()
  @ValidateNested()
  @Type(() => ResponsesTextDto)
  text?: ResponsesTextDto;

  @IsOptional()
  @ValidateNested()
  @Type(() => ResponsesReasoningDto)
  reasoning?: ResponsesReasoningDto;

  @IsOptional()
  @IsPlainObject()
  metadata?: Record<string, string>;

  @IsOptional()
  @IsString()
  previous_response_id?: string;

  @IsOptional()
  @IsBoolean()
  background?: boolean;

  @IsOptional()
  conversation?: unknown;

  @IsOptional()
  @IsString()
  user?: string;
}

/** `input`: a string, or a non-empty list of supported items; the message names the item at fault. */
function IsResponsesInput(): PropertyDecorator {
  return ValidateBy({
    name: 'isResponsesInput',
    validator: {
      validate: (value) =>
        typeof value === 'string' || (Array.isArray(value) && value.length > 0 && value.every((item) => inputItemProblem(item) === undefined)),
      defaultMessage: (args) => {
        const value: unknown = args?.value;
        if (!Array.isArray(value) || value.length === 0) return 'input must be a string or a non-empty list of input items';
        const index = value.findIndex((item) => inputItemProblem(item) !== undefined);
        return `input[${index}] ${inputItemProblem(value[index])}`;
      },
    },
  });
}
