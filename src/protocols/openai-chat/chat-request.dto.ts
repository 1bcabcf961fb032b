import {
  ArrayMaxSize,
  ArrayNotEmpty,
  Equals,
  IsBoolean,
  IsDefined,
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
import { FunctionDefinitionDto } from '../function-definition.dto.js';
import { IsKeywordOrObject, IsPlainObject, IsStringOrStringList } from '../validation/custom-validators.js';
import { NestedObject, NestedObjectList, Nullable, Optional } from '../validation/dto-fields.js';

export class StreamOptionsDto {
  @Nullable()
  @IsBoolean()
  include_usage?: boolean;

  @Nullable()
  @IsBoolean()
  continuous_usage_stats?: boolean;

  @Optional()
  @IsBoolean()
  include_obfuscation?: boolean;
}

export type ChatContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: string } }
  | { type: 'refusal'; refusal: string };

export class ChatMessageDto {
  @IsIn(['system', 'developer', 'user', 'assistant', 'tool'])
  role!: 'system' | 'developer' | 'user' | 'assistant' | 'tool';

  @IsChatContent()
  content?: string | ChatContentPart[] | null;

  @Nullable()
  @IsString()
  name?: string;

  @ValidateIf((message: ChatMessageDto) => message.role === 'tool')
  @IsString()
  @IsNotEmpty()
  tool_call_id?: string;

  @Nullable()
  @NestedObjectList(() => ChatToolCallDto)
  tool_calls?: ChatToolCallDto[];

  /** Reasoning of an earlier assistant turn; llama.cpp and DeepSeek name it reasoning_content, vLLM reasoning. */
  @Nullable()
  @IsString()
  reasoning_content?: string;

  @Nullable()
  @IsString()
  reasoning?: string;
}

export class ChatFunctionCallDto {
  @IsString()
  @IsNotEmpty()
  name!: string;

  @IsString()
  arguments!: string;
}

export class ChatToolCallDto {
  @IsString()
  @IsNotEmpty()
  id!: string;

  @Equals('function')
  type!: 'function';

  @NestedObject(() => ChatFunctionCallDto)
  function!: ChatFunctionCallDto;
}

export class ChatToolDto {
  @Equals('function', { message: 'only function tools are supported' })
  type!: 'function';

  @NestedObject(() => FunctionDefinitionDto)
  function!: FunctionDefinitionDto;
}

export class JsonSchemaFormatDto {
  @IsString()
  @IsNotEmpty()
  name!: string;

  @Optional()
  @IsPlainObject()
  schema?: Record<string, unknown>;

  @Nullable()
  @IsBoolean()
  strict?: boolean;

  @Optional()
  @IsString()
  description?: string;
}

export class ResponseFormatDto {
  @IsIn(['text', 'json_object', 'json_schema'])
  type!: 'text' | 'json_object' | 'json_schema';

  @ValidateIf((format: ResponseFormatDto) => format.type === 'json_schema')
  @IsDefined({ message: 'response_format.json_schema is required when type is json_schema' })
  @NestedObject(() => JsonSchemaFormatDto)
  json_schema?: JsonSchemaFormatDto;
}

/**
 * The Chat Completions request (openai-python `completion_create_params.py`), plus vLLM's
 * `top_k`, `continuous_usage_stats` and llama.cpp's `timings_per_token`. Unknown fields are
 * ignored, as vLLM does.
 */
export class ChatCompletionRequestDto {
  @IsString()
  @IsNotEmpty()
  model!: string;

  @ArrayNotEmpty()
  @NestedObjectList(() => ChatMessageDto)
  messages!: ChatMessageDto[];

  @Nullable()
  @IsBoolean()
  stream?: boolean;

  @Nullable()
  @NestedObject(() => StreamOptionsDto)
  stream_options?: StreamOptionsDto;

  @Nullable()
  @IsBoolean()
  timings_per_token?: boolean;

  @Nullable()
  @IsInt()
  @Min(1)
  max_tokens?: number;

  @Nullable()
  @IsInt()
  @Min(1)
  max_completion_tokens?: number;

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
  @IsInt()
  @Min(-1)
  top_k?: number;

  @Nullable()
  @IsInt()
  seed?: number;

  @Nullable()
  @IsNumber()
  @Min(-2)
  @Max(2)
  frequency_penalty?: number;

  @Nullable()
  @IsNumber()
  @Min(-2)
  @Max(2)
  presence_penalty?: number;

  @Nullable()
  @IsStringOrStringList(16)
  stop?: string | string[];

  @Nullable()
  @IsInt()
  @Min(1)
  @Max(1, { message: 'n must be 1: this gateway streams one choice per request' })
  n?: number;

  @Nullable()
  @Equals(false, { message: 'logprobs are not supported by this gateway' })
  logprobs?: boolean;

  @Optional()
  @ArrayMaxSize(128)
  @NestedObjectList(() => ChatToolDto)
  tools?: ChatToolDto[];

  @Optional()
  @IsKeywordOrObject(
    ['none', 'auto', 'required'],
    (value) =>
      value.type === 'function' && typeof (value.function as { name?: unknown } | undefined)?.name === 'string',
    '{"type": "function", "function": {"name": ...}}',
  )
  tool_choice?: 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

  @Optional()
  @IsBoolean()
  parallel_tool_calls?: boolean;

  @Optional()
  @NestedObject(() => ResponseFormatDto)
  response_format?: ResponseFormatDto;

  @Nullable()
  @IsIn(['none', 'minimal', 'low', 'medium', 'high'])
  reasoning_effort?: string;

  @Optional()
  @IsString()
  user?: string;
}

const PART_TYPES_BY_ROLE: Record<string, readonly string[]> = {
  user: ['text', 'image_url'],
  assistant: ['text', 'refusal'],
};

/** Own keys only: a role named `toString` or `__proto__` is refused by its own rule, not thrown on here. */
function partTypesOf(role: string): readonly string[] {
  return Object.hasOwn(PART_TYPES_BY_ROLE, role) ? PART_TYPES_BY_ROLE[role] : ['text'];
}

/** `content` by role: a string or parts; null or absent only for an assistant turn. */
function IsChatContent(): PropertyDecorator {
  return ValidateBy({
    name: 'isChatContent',
    validator: {
      validate: (value, args) => {
        const role = (args!.object as ChatMessageDto).role;
        if (typeof value === 'string') return true;
        if (value === null || value === undefined) return role === 'assistant';
        if (!Array.isArray(value)) return false;
        const allowed = partTypesOf(role);
        return value.every((part: unknown) => isValidPart(part, allowed));
      },
      defaultMessage: (args) => {
        const role = (args!.object as ChatMessageDto).role;
        const allowed = partTypesOf(role).join(', ');
        return `content must be a string or a list of parts (${allowed}) for a ${role} message`;
      },
    },
  });
}

function isValidPart(part: unknown, allowed: readonly string[]): boolean {
  if (typeof part !== 'object' || part === null) return false;
  const candidate = part as Record<string, unknown>;
  if (!allowed.includes(candidate.type as string)) return false;
  switch (candidate.type) {
    case 'text':
      return typeof candidate.text === 'string';
    case 'refusal':
      return typeof candidate.refusal === 'string';
    case 'image_url':
      return typeof (candidate.image_url as { url?: unknown } | undefined)?.url === 'string';
    default:
      return false;
  }
}
