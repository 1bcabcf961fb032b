import {
  ArrayMaxSize,
  ArrayNotEmpty,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsNumber,
  IsString,
  Matches,
  Max,
  Min,
  ValidateBy,
  ValidateIf,
} from 'class-validator';
import { IsPlainObject } from '../validation/custom-validators.js';
import { NestedObject, NestedObjectList, Nullable, Optional } from '../validation/dto-fields.js';
import { allowedBlockTypes, isValidBlock, type AnthropicBlock, type AnthropicTextBlock } from './anthropic-content.js';

export class AnthropicMessageDto {
  /** `system` too: a system prompt at this point of the conversation (Claude Code sends them). */
  @IsIn(['user', 'assistant', 'system'])
  role!: 'user' | 'assistant' | 'system';

  @IsMessageContent()
  content!: string | AnthropicBlock[];
}

export class AnthropicToolDto {
  @IsString()
  @Matches(/^[a-zA-Z0-9_-]{1,128}$/, { message: 'tool names are 1-128 letters, digits, _ or -' })
  name!: string;

  @Optional()
  @IsString()
  description?: string;

  @IsPlainObject()
  input_schema!: Record<string, unknown>;

  @Nullable()
  @IsIn(['custom'], { message: 'only client (custom) tools are supported' })
  type?: 'custom';

  @Optional()
  @IsBoolean()
  strict?: boolean;
}

export class AnthropicToolChoiceDto {
  @IsIn(['auto', 'any', 'tool', 'none'])
  type!: 'auto' | 'any' | 'tool' | 'none';

  @ValidateIf((choice: AnthropicToolChoiceDto) => choice.type === 'tool')
  @IsString()
  @IsNotEmpty()
  name?: string;

  @Optional()
  @IsBoolean()
  disable_parallel_tool_use?: boolean;
}

export class AnthropicThinkingDto {
  @IsIn(['enabled', 'disabled', 'adaptive'])
  type!: 'enabled' | 'disabled' | 'adaptive';

  @ValidateIf((thinking: AnthropicThinkingDto) => thinking.type === 'enabled')
  @IsInt()
  @Min(1024)
  budget_tokens?: number;
}

export class AnthropicMetadataDto {
  @Nullable()
  @IsString()
  user_id?: string;
}

/** What `/v1/messages` and `/v1/messages/count_tokens` share: the prompt. */
export class AnthropicPromptDto {
  @IsString()
  @IsNotEmpty()
  model!: string;

  @ArrayNotEmpty()
  @HasConversationTurn()
  @NestedObjectList(() => AnthropicMessageDto)
  messages!: AnthropicMessageDto[];

  @Optional()
  @IsSystemPrompt()
  system?: string | AnthropicTextBlock[];

  @Optional()
  @ArrayMaxSize(128)
  @NestedObjectList(() => AnthropicToolDto)
  tools?: AnthropicToolDto[];

  @Optional()
  @NestedObject(() => AnthropicToolChoiceDto)
  tool_choice?: AnthropicToolChoiceDto;

  @Optional()
  @NestedObject(() => AnthropicThinkingDto)
  thinking?: AnthropicThinkingDto;
}

/** `POST /v1/messages` (message_create_params.py). Unknown fields are ignored. */
export class MessagesRequestDto extends AnthropicPromptDto {
  @IsInt()
  @Min(1)
  max_tokens!: number;

  @Optional()
  @IsBoolean()
  stream?: boolean;

  @Optional()
  @IsArray()
  @ArrayMaxSize(16)
  @IsString({ each: true })
  stop_sequences?: string[];

  @Optional()
  @IsNumber()
  @Min(0)
  @Max(1)
  temperature?: number;

  @Optional()
  @IsNumber()
  @Min(0)
  @Max(1)
  top_p?: number;

  @Optional()
  @IsInt()
  @Min(0)
  top_k?: number;

  @Optional()
  @NestedObject(() => AnthropicMetadataDto)
  metadata?: AnthropicMetadataDto;
}

/** `POST /v1/messages/count_tokens`: the prompt alone. */
export class CountTokensRequestDto extends AnthropicPromptDto {}

/** A message's content: a string, or blocks of the types its role may carry. */
function IsMessageContent(): PropertyDecorator {
  return ValidateBy({
    name: 'isMessageContent',
    validator: {
      validate: (value, args) => {
        const role = (args!.object as AnthropicMessageDto).role;
        if (typeof value === 'string') return true;
        return Array.isArray(value) && value.length > 0 && value.every((block) => isValidBlock(block, role));
      },
      defaultMessage: (args) => {
        const role = (args!.object as AnthropicMessageDto).role;
        return `content must be a string or a non-empty list of content blocks (${allowedBlockTypes(role).join(', ')}) for a ${role} message`;
      },
    },
  });
}

/** System messages alone leave nothing to answer: at least one user or assistant turn. */
function HasConversationTurn(): PropertyDecorator {
  return ValidateBy({
    name: 'hasConversationTurn',
    validator: {
      validate: (value) =>
        !Array.isArray(value) ||
        value.length === 0 ||
        value.some((message) => (message as { role?: unknown })?.role !== 'system'),
      defaultMessage: () => 'messages must hold at least one user or assistant message, not only system messages',
    },
  });
}

function IsSystemPrompt(): PropertyDecorator {
  return ValidateBy({
    name: 'isSystemPrompt',
    validator: {
      validate: (value) =>
        typeof value === 'string' ||
        (Array.isArray(value) &&
          value.every((block) => isValidBlock(block, 'user') && (block as { type: string }).type === 'text')),
      defaultMessage: () => 'system must be a string or a list of text blocks',
    },
  });
}
