import { Module } from '@nestjs/common';
import { TokenUsageByKeyHook } from './token-usage-by-key.hook.js';

/**
 * A Gantry plugin is a Nest module, default-exported. Load it with
 * `plugins: [./dist/examples/token-usage-by-key/token-usage-by-key.module.js]` in the config.
 * Its GenerationHook is a plain provider (not an `APP_INTERCEPTOR`: a hook is no Nest
 * interceptor): the generation routes find it when the gateway is built.
 */
@Module({ providers: [TokenUsageByKeyHook] })
export default class TokenUsageByKeyModule {}
