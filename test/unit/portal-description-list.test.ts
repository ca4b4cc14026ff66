/**
 * The portal's description list: every fact a `<dt>` term and its `<dd>` value, in order, the
 * value's id only where one is given, markup inside a value kept and text escaped.
 */
import { html } from 'htm/preact';
import { render } from 'preact-render-to-string';
import { descriptionList } from '../../src/portal/description-list';

test('when facts are listed, then each is a dt term and its dd value in order, with an id only where given', () => {
  const markup = render(
    descriptionList([
      ['Status', 'issued'],
      ['Premium difference', '$12.50', 'premium-difference'],
      ['Payment intent', html`<code>pi_123</code>`],
    ]),
  );
  expect(markup).toBe(
    '<dl><dt>Status</dt><dd>issued</dd><dt>Premium difference</dt><dd id="premium-difference">$12.50</dd>' +
      '<dt>Payment intent</dt><dd><code>pi_123</code></dd></dl>',
  );
});

test('when a value holds markup characters as text, then they are escaped', () => {
  const markup = render(descriptionList([['Buyer', '<script>alert(1)</script>']]));
  expect(markup).toBe('<dl><dt>Buyer</dt><dd>&lt;script>alert(1)&lt;/script></dd></dl>');
  expect(markup).not.toContain('<script');
});
