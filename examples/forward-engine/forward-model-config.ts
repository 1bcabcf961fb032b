import { IsNotEmpty, IsOptional, IsString, IsUrl, Matches } from 'class-validator';
import { ModelConfigBase } from '../../src/index.js';

/** The keys of an `engine: forward` model entry, beside those every model has. */
export class ForwardModelConfig extends ModelConfigBase {
  /** The API's base URL, its version prefix included: `https://my-resource.openai.azure.com/openai/v1`. */
  @IsUrl(
    { require_tld: false, require_protocol: true, protocols: ['http', 'https'] },
    { message: 'baseUrl must be an http(s) URL' },
  )
  baseUrl!: string;

  /** The model name the API knows; the gateway's `name` when absent. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  upstreamModel?: string;

  /** The header the API reads its key from (Azure OpenAI: `api-key`). */
  @Matches(/^[A-Za-z0-9-]+$/, { message: 'authHeader must be an HTTP header name' })
  authHeader: string = 'api-key';

  /** The environment variable holding the key: the key itself stays out of the file. */
  @Matches(/^[A-Za-z_][A-Za-z0-9_]*$/, { message: 'apiKeyEnv must be the name of an environment variable' })
  apiKeyEnv!: string;
}
