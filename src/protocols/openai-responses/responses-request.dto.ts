import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  Equals,
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
import { FunctionDefinitionDto } from '../function-definition.dto.js';
import { IsKeywordOrObject, IsPlainObject } from '../validation/custom-validators.js';
import { inputItemProblem, type ResponsesInputItem } from './responses-input.js';

/** A function tool: flat in Responses (`{type, name, parameters}`), not nested as in Chat. */
export class ResponsesToolDto extends FunctionDefinitionDto {
  @Equals('function', { message: 'only function tools are supported' })
  type!: 'function';
}

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
  @IsIn(['none', 'minimal', 'low', 'medium', 'high'])
  effort?: string;

  @IsOptional()
  @IsIn(['auto', 'concise', 'detailed'])
  summary?: string;
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

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(128)
  @ValidateNested({ each: true })
  @Type(() => ResponsesToolDto)
  tools?: ResponsesToolDto[];

  @IsOptional()
  @IsKeywordOrObject(
    ['none', 'auto', 'required'],
    (value) => value.type === 'function' && typeof value.name === 'string',
    '{"type": "function", "name": ...}',
  )
  tool_choice?: 'none' | 'auto' | 'required' | { type: 'function'; name: string };

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
