import { optionError } from '../../errors/option-error.js';

/**
 * Loads an optional peer dependency by dynamic `import()`, only when the
 * option that needs it is configured; a missing package fails the bootstrap
 * with the option and the package to install.
 */
export async function loadPeer<T>(
  option: string,
  packageName: string,
  load: () => Promise<T>,
): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw optionError(
        'RateLimitModule',
        option,
        `needs the package ${packageName}, which is not installed: npm install ${packageName}`,
      );
    }
    throw error;
  }
}
