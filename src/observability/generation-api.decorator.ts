import { SetMetadata } from '@nestjs/common';
import type { ApiName } from './generation-telemetry.js';

export const GENERATION_API = 'gantry:generation-api';

/** Marks a handler as a generation endpoint of the given API; generation interceptors only watch these. */
export const GenerationApi = (api: ApiName) => SetMetadata(GENERATION_API, api);
