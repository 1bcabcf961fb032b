import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsNumber,
  IsString,
  Max,
  Min,
  ValidateBy,
  ValidateIf,
} from 'class-validator';
import { IsKeywordOrObject, IsPlainObject, IsStringMap } from '../validation/custom-validators.js';
import { NestedObject, Nullable, Optional } from '../validation/dto-fields.js';
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

  @Nullable()
  @IsBoolean()
  strict?: boolean;
}

export class ResponsesTextDto {
  @Optional()
  @NestedObject(() => ResponsesTextFormatDto)
  format?: ResponsesTextFormatDto;
}

export class ResponsesReasoningDto {
  @Nullable()
  @IsIn(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'])
  effort?: string;

  /** Set: the reasoning also streams as a summary (Gantry has no summarizer: it is the reasoning itself). */
  @Nullable()
  @IsIn(['auto', 'concise', 'detailed'])
  summary?: string;

  /** The older name of `summary`. */
  @Nullable()
  @IsIn(['auto', 'concise', 'detailed'])
  generate_summary?: string;
}

/**
 * What `POST /v1/responses` and `POST /v1/responses/input_tokens` share: the prompt, less its
 * `input` (required by one, optional for the other).
 */
export class ResponsesPromptDto {
  @IsString()
  @IsNotEmpty()
  model!: string;

  @Nullable()
  @IsString()
  instructions?: string;

  /** Function, custom, namespace and hosted tools; each is checked where it is read (readResponsesTools). */
  @Optional()
  @IsArray()
  @ArrayMaxSize(128)
  tools?: Array<Record<string, unknown>>;

  @Optional()
  @IsKeywordOrObject(
    ['none', 'auto', 'required'],
    (value) => typeof value.type === 'string',
    '{"type": "function", "name": ...}',
  )
  tool_choice?: ResponsesToolChoice;

  @Nullable()
  @IsBoolean()
  parallel_tool_calls?: boolean;

  @Optional()
  @NestedObject(() => ResponsesTextDto)
  text?: ResponsesTextDto;

  @Nullable()
  @NestedObject(() => ResponsesReasoningDto)
  reasoning?: ResponsesReasoningDto;

  @Nullable()
  @IsString()
  previous_response_id?: string;

  @Nullable()
  conversation?: unknown;
}

/** `POST /v1/responses` (response_create_params.py). */
export class ResponsesRequestDto extends ResponsesPromptDto {
  @IsResponsesInput()
  input!: string | ResponsesInputItem[];

  @Nullable()
  @IsInt()
  @Min(1)
  max_output_tokens?: number;

  @Nullable()
  @IsNumber()
  @Min(0)
  @Max(2)
  temperature?: number;

  @Nullable()
  @IsNumber()
  @Min(0)
  @Max(1)
  top_p?: number;

  @Nullable()
  @IsBoolean()
  stream?: boolean;

  @Nullable()
  @IsBoolean()
  store?: boolean;

  /** Extra output to include; `reasoning.encrypted_content` is acted on, the others are accepted and ignored. */
  @Nullable()
  @IsArray()
  @ArrayMaxSize(32)
  @IsString({ each: true })
  include?: string[];

  @Nullable()
  @IsStringMap()
  metadata?: Record<string, string>;

  @Nullable()
  @IsBoolean()
  background?: boolean;

  @Optional()
  @IsString()
  user?: string;
}

/** `POST /v1/responses/input_tokens` (input_token_count_params.py): the prompt a create would send, counted. */
export class InputTokensRequestDto extends ResponsesPromptDto {
  @Nullable()
  @IsResponsesInput()
  input?: string | ResponsesInputItem[];

  @Nullable()
  @IsIn(['auto', 'disabled'])
  truncation?: 'auto' | 'disabled';
}

/** `input`: a string, or a non-empty list of supported items; the message names the item at fault. */
function IsResponsesInput(): PropertyDecorator {
  return ValidateBy({
    name: 'isResponsesInput',
    validator: {
      validate: (value) =>
        typeof value === 'string' ||
        (Array.isArray(value) && value.length > 0 && value.every((item) => inputItemProblem(item) === undefined)),
      defaultMessage: (args) => {
        const value: unknown = args?.value;
        if (!Array.isArray(value) || value.length === 0)
          return 'input must be a string or a non-empty list of input items';
        const index = value.findIndex((item) => inputItemProblem(item) !== undefined);
        return `input[${index}] ${inputItemProblem(value[index])}`;
      },
    },
  });
}
