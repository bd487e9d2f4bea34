import { describeValue, optionError } from './option-error.js';

describe('describeValue: what a message shows after "got", type included', () => {
  class Config {}

  it.each<[string, unknown, string]>([
    ['a number', 5, '5'],
    ['NaN', NaN, 'NaN'],
    ['Infinity', -Infinity, '-Infinity'],
    ['undefined', undefined, 'undefined'],
    ['null', null, 'null'],
    ['a string, quoted', 'true', '"true"'],
    ['an empty string', '', '""'],
    ['a string with quotes', 'a "b"', '"a \\"b\\""'],
    ['a boolean', true, 'a boolean (true)'],
    ['false', false, 'a boolean (false)'],
    ['a bigint', 5n, 'a bigint (5n)'],
    ['a symbol', Symbol('x'), 'a symbol (Symbol(x))'],
    ['a function', () => 1, 'a function'],
    ['an array', ['10.0.0.0/8'], 'an array'],
    ['an object', {}, 'an object'],
    ['an object without a prototype', Object.create(null), 'an object'],
    ['a class instance', new Config(), 'an instance of Config'],
    ['a boxed number', new Number(5), 'an instance of Number'],
  ])('%s', (_case, value, shown) => {
    expect(describeValue(value)).toBe(shown);
  });

  it("tells 'true' from true, and {} from '[object Object]'", () => {
    expect(describeValue('true')).not.toBe(describeValue(true));
    expect(describeValue({})).not.toBe(describeValue('[object Object]'));
    expect(describeValue('5')).not.toBe(describeValue(5));
    expect(describeValue('null')).not.toBe(describeValue(null));
  });

  it('optionError: <where>: <option> <problem>', () => {
    const error = optionError(
      'RateLimitModule',
      'trustProxy',
      `must be a boolean, got ${describeValue('true')}`,
    );
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toBe('RateLimitModule: trustProxy must be a boolean, got "true"');
  });
});
