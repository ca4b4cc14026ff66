import { ConfigError, loadConfig } from '../../src/config';

describe('loadConfig', () => {
  test('when the environment is empty, then the local-stack defaults apply', () => {
    const c = loadConfig({});
    expect(c.PORT).toBe(3000);
    expect(c.DATABASE_URL).toBe('postgres://postgres@127.0.0.1:5432/insurance');
    expect(c.PAYPROC_API_BASE).toBe('http://127.0.0.1:12111');
    expect(c.REDIS_URL).toBeUndefined();
    expect(c.RATE_LIMIT_PER_MINUTE).toBe(100);
    expect(c.API_KEY_ROTATION_GRACE_HOURS).toBe(24);
  });

  test.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'not a url'],
    ['PAYPROC_WEBHOOK_SECRET', 'secret'],
    ['LOG_LEVEL', 'loud'],
    ['REDIS_URL', 'nope'],
  ])('when %s is %p, then one line names the variable', (name, value) => {
    let error: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message.startsWith(`Invalid configuration: ${name}:`)).toBe(true);
    expect(message).not.toContain('\n');
  });

  test('when an endpoint is set to empty, then it means the real service (no override)', () => {
    const c = loadConfig({ PAYPROC_API_BASE: '', STORAGE_API_ENDPOINT: ' ', REDIS_URL: '' });
    expect(c.PAYPROC_API_BASE).toBeUndefined();
    expect(c.STORAGE_API_ENDPOINT).toBeUndefined();
    expect(c.REDIS_URL).toBeUndefined();
  });
});
