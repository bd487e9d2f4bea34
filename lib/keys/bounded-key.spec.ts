import { boundedIdentity } from './bounded-key.js';

const DIGEST = /^#[A-Za-z0-9_-]{43}$/; // '#' + base64url of a SHA-256 (32 bytes, unpadded)

describe('boundedIdentity', () => {
  describe('short printable ASCII passes as it is, marked "="', () => {
    it.each([
      'alice',
      '42',
      'user@example.com',
      'Bearer:abc.def-ghi_jkl~',
      '!',
      '~',
      '#alice',
      '=alice',
    ])('%p', (identity) => {
      expect(boundedIdentity(identity)).toBe(`=${identity}`);
    });

    it('the empty string too (callers fall back to the address before this)', () => {
      expect(boundedIdentity('')).toBe('=');
    });

    it('up to 128 characters', () => {
      const longest = 'x'.repeat(128);
      expect(boundedIdentity(longest)).toBe(`=${longest}`);
    });
  });

  describe('anything else becomes "#" + the SHA-256 digest, base64url', () => {
    it.each([
      ['129 characters', 'x'.repeat(129), '#DsnrM-dFELzdHy6lUgboLyFknFwr7L8rQz60dbNMAb0'],
      ['a space', 'a b', '#yGh6CKpdbtIEQyj6aml6uOltw0KR6MIDSujDjm_MbWU'],
      ['non-ASCII', 'é', '#SplVfkAzw1Od4utlRyAXytX5VX96BiWgnxw_biumnEw'],
      ['a NUL byte', 'alice\u0000', '#v-vviOSzaHTuJvMkEpvSj4zQ0EpoOqa19YpDsyC7fFw'],
    ])('%s', (_label, identity, digest) => {
      // Fixed: a different digest would move every stored bucket to a new key.
      expect(boundedIdentity(identity)).toBe(digest);
    });

    it.each([
      ['a tab', 'a\tb'],
      ['a newline', 'a\nb'],
      ['DEL', 'a\u007f'],
      ['a control character', '\u0001'],
      ['a lone surrogate', '\uD800'],
      ['an emoji', 'user-😀'],
    ])('%s', (_label, identity) => {
      expect(boundedIdentity(identity)).toMatch(DIGEST);
    });

    it('whatever the length: a 1 MB header is 44 characters', () => {
      const huge = 'a'.repeat(1 << 20);
      expect(boundedIdentity(huge)).toMatch(DIGEST);
      expect(boundedIdentity(huge)).toHaveLength(44);
    });

    it('distinct inputs, distinct digests; the same input, the same digest', () => {
      const long = 'y'.repeat(200);
      expect(boundedIdentity(long)).toBe(boundedIdentity('y'.repeat(200)));
      expect(boundedIdentity(long)).not.toBe(boundedIdentity(`${long}z`));
      expect(boundedIdentity('a b')).not.toBe(boundedIdentity('a  b'));
    });
  });

  it('a raw identity can never equal a digest: one starts with "=", the other with "#"', () => {
    const digest = boundedIdentity('a b');
    expect(boundedIdentity(digest)).toBe(`=${digest}`);
    expect(boundedIdentity(digest.slice(1))).toBe(`=${digest.slice(1)}`);
  });
});
