import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule);
  // SIGINT / SIGTERM close the app gracefully, which closes the rate-limit store.
  app.enableShutdownHooks();
  const port = Number(process.env.PORT ?? 3000);
  await app.listen(port, '127.0.0.1');
  console.log(
    `Sample API on http://127.0.0.1:${port} (store: ${process.env.RATE_LIMIT_STORE ?? 'memory'})`,
  );
  console.log(
    `Try: for i in $(seq 1 12); do curl -s -o /dev/null -w '%{http_code} ' http://127.0.0.1:${port}/products; done`,
  );
}

void bootstrap();
