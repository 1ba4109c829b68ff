import { ConfigError, bool, int, loadConfig, oneOf, str } from './index';

const schema = {
  NAME: str('a name', 'default-name'),
  COUNT: int('a count', 3, 1, 10),
  FLAG: bool('a flag', false),
  MODE: oneOf('a mode', ['a', 'b'] as const, 'a'),
  SECRET: str('a required secret'),
};

describe('loadConfig', () => {
  it('applies named defaults and parses given values', () => {
    expect(loadConfig(schema, { SECRET: 's', COUNT: '7', FLAG: 'true' })).toEqual({ NAME: 'default-name', COUNT: 7, FLAG: true, MODE: 'a', SECRET: 's' });
  });

  it('fails fast, naming every bad key', () => {
    let message = '';
    try {
      loadConfig(schema, { COUNT: '11', FLAG: 'perhaps', MODE: 'c' });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      message = (error as Error).message;
    }
    for (const key of ['SECRET', 'COUNT', 'FLAG', 'MODE']) expect(message).toContain(key);
  });
});
