import { isNoScript } from './no-script.js';

/** Error texts as servers and clients give them (Valkey's from its 8.0 source: `src/eval.c`). */
const REDIS_7 = 'NOSCRIPT No matching script. Please use EVAL.';
const VALKEY_8 = 'NOSCRIPT No matching script.';
const GLIDE = 'An error was signalled by the server: - NoScriptError: No matching script.';

describe('isNoScript (the EVAL fallback)', () => {
  it('recognises NOSCRIPT by the reply code, whatever the text after it (Redis 7, Valkey 8, a future one)', () => {
    expect(isNoScript(new Error(REDIS_7))).toBe(true);
    expect(isNoScript(new Error(VALKEY_8))).toBe(true);
    expect(isNoScript(new Error('NOSCRIPT'))).toBe(true);
    expect(isNoScript(new Error('NOSCRIPT script not found, try EVAL'))).toBe(true);
  });

  it("recognises Valkey GLIDE's rendering of the code", () => {
    expect(isNoScript(new Error(GLIDE))).toBe(true);
    expect(
      isNoScript(
        new Error(
          'An error was signalled by the server: - NoScriptError: No matching script. Please use EVAL.',
        ),
      ),
    ).toBe(true);
  });

  it('accepts an error-like object that is not an Error (some client wrappers)', () => {
    expect(isNoScript({ message: VALKEY_8 })).toBe(true);
    expect(isNoScript({ message: 42 })).toBe(false);
    expect(isNoScript('NOSCRIPT No matching script.')).toBe(false);
    expect(isNoScript(undefined)).toBe(false);
  });

  it('never takes another error that mentions NOSCRIPT further on for one (the script would run twice)', () => {
    expect(isNoScript(new Error('ERR user_script:1: NOSCRIPT oops'))).toBe(false);
    expect(isNoScript(new Error('ERR Error running script: NOSCRIPT'))).toBe(false);
    expect(isNoScript(new Error('NOSCRIPTS are fine'))).toBe(false);
    expect(isNoScript(new Error('noscript no matching script'))).toBe(false);
    expect(
      isNoScript(new Error('An error was signalled by the server: - ResponseError: oops NOSCRIPT')),
    ).toBe(false);
    expect(isNoScript(new Error('Connection is closed.'))).toBe(false);
  });
});
