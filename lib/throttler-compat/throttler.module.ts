import { Global, Module, type DynamicModule, type Provider } from '@nestjs/common';
import { THROTTLER_OPTIONS } from './throttler.constants.js';
import type {
  ThrottlerAsyncOptions,
  ThrottlerModuleOptions,
  ThrottlerOptionsFactory,
} from './throttler-module-options.interface.js';
import { createThrottlerProviders, ThrottlerStorageProvider } from './throttler.providers.js';

/** `@nestjs/throttler` 6's module: global, providing the options and the storage. */
@Global()
@Module({})
export class ThrottlerModule {
  static forRoot(options: ThrottlerModuleOptions = []): DynamicModule {
    const providers = [...createThrottlerProviders(options), ThrottlerStorageProvider];
    return { module: ThrottlerModule, providers, exports: providers };
  }

  static forRootAsync(options: ThrottlerAsyncOptions): DynamicModule {
    const providers = [...this.createAsyncProviders(options), ThrottlerStorageProvider];
    return {
      module: ThrottlerModule,
      imports: options.imports ?? [],
      providers,
      exports: providers,
    };
  }

  private static createAsyncProviders(options: ThrottlerAsyncOptions): Provider[] {
    if (options.useExisting || options.useFactory)
      return [this.createAsyncOptionsProvider(options)];
    return [
      this.createAsyncOptionsProvider(options),
      { provide: options.useClass!, useClass: options.useClass! },
    ];
  }

  private static createAsyncOptionsProvider(options: ThrottlerAsyncOptions): Provider {
    if (options.useFactory)
      return {
        provide: THROTTLER_OPTIONS,
        useFactory: options.useFactory,
        inject: options.inject ?? [],
      };
    return {
      provide: THROTTLER_OPTIONS,
      useFactory: async (factory: ThrottlerOptionsFactory) =>
        await factory.createThrottlerOptions(),
      inject: [(options.useExisting ?? options.useClass)!],
    };
  }
}
