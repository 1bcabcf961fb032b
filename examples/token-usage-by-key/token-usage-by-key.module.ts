import { Module } from '@nestjs/common';
import { TokenUsageByKeyInterceptor } from './token-usage-by-key.interceptor.js';

/**
 * A Gantry plugin is a Nest module, default-exported. Load it with
 * `plugins: [./dist/examples/token-usage-by-key/token-usage-by-key.module.js]` in the config.
 * Its GenerationInterceptor is a plain provider: the generation routes find it when the gateway
 * is built (an `APP_INTERCEPTOR` registration is found too).
 */
@Module({ providers: [TokenUsageByKeyInterceptor] })
export default class TokenUsageByKeyModule {}
