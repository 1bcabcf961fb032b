import { Controller, Get } from '@nestjs/common';

/** Liveness: the process is up and serving HTTP. */
@Controller('health')
export class HealthController {
  @Get()
  health() {
    return { status: 'ok' };
  }
}
