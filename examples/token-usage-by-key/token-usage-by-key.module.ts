import { Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { TokenUsageByKeyInterceptor } from './token-usage-by-key.interceptor.js';

/**
 * A Gantry plugin is a Nest module, default-exported. Load it with
 * `plugins: [./dist/examples/token-usage-by-key/token-usage-by-key.module.js]` in the config.
 */
@Module({ providers: [{ provide: APP_INTERCEPTOR, useClass: TokenUsageByKeyInterceptor }] })
export default class TokenUsageByKeyModule {}
