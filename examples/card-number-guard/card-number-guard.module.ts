import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { CardNumberGuard } from './card-number-guard.js';

/** The plugin: list its built file under `plugins:`; its guard is an `APP_GUARD`, the usual Nest way. */
@Module({ providers: [{ provide: APP_GUARD, useClass: CardNumberGuard }] })
export default class CardNumberGuardPlugin {}
