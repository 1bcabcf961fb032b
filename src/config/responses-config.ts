import { IsOptional, IsString, MinLength } from 'class-validator';

/** The OpenAI Responses API (`responses:` in the YAML). */
export class ResponsesConfig {
  /**
   * The secret that seals reasoning into `encrypted_content` (AES-256-GCM; the key is the
   * SHA-256 of this string). Every replica behind one load balancer needs the same one. Absent:
   * a random key is made at each start, so blobs sealed before a restart are refused after it.
   */
  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'responses.encryptionKey must be at least 32 characters (for example the output of `openssl rand -base64 32`)' })
  encryptionKey?: string;
}
