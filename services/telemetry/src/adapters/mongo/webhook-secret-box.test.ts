import { WebhookSecretBox } from './webhook-secret-box';

const OLD = 'old:an-old-key-of-at-least-32-characters!!';
const NEW = 'new:a-new-key-of-at-least-32-characters!!!';

describe('webhook secrets at rest', () => {
  it('are sealed so that the secret does not show, and open under the same webhook', () => {
    const box = new WebhookSecretBox(OLD);
    const sealed = box.seal('whsec_abc123', 'webhook-1');
    expect(sealed).toMatch(/^v1:old:/);
    expect(sealed).not.toContain('whsec_abc123');
    expect(box.open(sealed, 'webhook-1')).toEqual({ secret: 'whsec_abc123', reseal: false });
    expect(box.seal('whsec_abc123', 'webhook-1')).not.toBe(sealed);
  });

  it('do not open under another webhook, or once altered', () => {
    const box = new WebhookSecretBox(OLD);
    const sealed = box.seal('whsec_abc123', 'webhook-1');
    expect(() => box.open(sealed, 'webhook-2')).toThrow();
    const altered = sealed.replace(/:([A-Za-z0-9+/])([^:]*):([^:]*)$/, (_match, first: string, rest: string, tag: string) => `:${first === 'A' ? 'B' : 'A'}${rest}:${tag}`);
    expect(() => box.open(altered, 'webhook-1')).toThrow();
  });

  it('rotate: a new first key seals, the old one still opens and asks for a reseal, and a dropped key is named', () => {
    const sealedUnderOld = new WebhookSecretBox(OLD).seal('whsec_abc123', 'webhook-1');
    const rotated = new WebhookSecretBox(`${NEW},${OLD}`);
    expect(rotated.open(sealedUnderOld, 'webhook-1')).toEqual({ secret: 'whsec_abc123', reseal: true });
    expect(rotated.seal('whsec_abc123', 'webhook-1')).toMatch(/^v1:new:/);
    expect(() => new WebhookSecretBox(NEW).open(sealedUnderOld, 'webhook-1')).toThrow(/"old"/);
  });

  it('open a secret stored in plain text before sealing, and ask for it to be sealed', () => {
    expect(new WebhookSecretBox(NEW).open('whsec_plain', 'webhook-1')).toEqual({ secret: 'whsec_plain', reseal: true });
  });

  it('refuse keys that are missing, short, or share an id', () => {
    expect(() => new WebhookSecretBox('')).toThrow(/empty/);
    expect(() => new WebhookSecretBox('k:short')).toThrow(/at least 32/);
    expect(() => new WebhookSecretBox(`${OLD},${OLD}`)).toThrow(/same id/);
  });
});
