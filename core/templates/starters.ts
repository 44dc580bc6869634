import type { Block } from './blocks.js';
import type { Layout, Section } from './visual.js';

// Starters: ready layouts a template can begin from (`POST /templates` with `starter`). Their
// subject, layout and variables become version 1, which opens in the visual editor. They use
// brand tokens throughout, so a starter looks like the team's own mail from the first send.

export interface Starter {
  slug: string;
  name: string;
  subject: string;
  variables: { key: string; type: 'string' | 'number'; fallback_value: string | number | null }[];
  layout: Layout;
}

const header: Block[] = [{ type: 'image', src: '{{brand.logo_url}}', alt: '{{brand.company_name}}', width: 140 }];
const footer: Section = { columns: [[{ type: 'divider' }, { type: 'footer' }]], background_color: '#f9fafb' };

export const starters: readonly Starter[] = [
  {
    slug: 'welcome',
    name: 'Welcome',
    subject: 'Welcome, {{first_name}}',
    variables: [{ key: 'first_name', type: 'string', fallback_value: 'there' }, { key: 'cta_url', type: 'string', fallback_value: 'https://example.com/start' }],
    layout: {
      sections: [
        { columns: [[{ type: 'preheader', text: 'Everything you need to get started' }, ...header]] },
        { columns: [[
          { type: 'heading', text: 'Welcome aboard, {{first_name}}!', level: 1 },
          { type: 'text', text: 'We are glad you are here. Here is everything you need to get going in a few minutes.' },
          { type: 'button', text: 'Get started', href: '{{cta_url}}', align: 'center' },
        ]] },
        footer,
      ],
    },
  },
  {
    slug: 'newsletter',
    name: 'Newsletter',
    subject: '{{headline}}',
    variables: [{ key: 'headline', type: 'string', fallback_value: 'This month at a glance' }],
    layout: {
      sections: [
        { columns: [[{ type: 'preheader', text: 'The news, the updates and what is next' }, ...header]] },
        { columns: [[{ type: 'heading', text: '{{headline}}', level: 1 }, { type: 'text', text: 'A short introduction to this issue goes here.' }]] },
        { columns: [
          [{ type: 'card', title: 'First story', text: 'What happened, in two sentences.', button_text: 'Read more', button_href: 'https://example.com/1' }],
          [{ type: 'card', title: 'Second story', text: 'Another update worth a click.', button_text: 'Read more', button_href: 'https://example.com/2' }],
        ] },
        { columns: [[{ type: 'social', links: [{ network: 'x', href: 'https://x.com/example' }, { network: 'linkedin', href: 'https://www.linkedin.com/company/example' }] }]] },
        footer,
      ],
    },
  },
  {
    slug: 'promotion',
    name: 'Promotion',
    subject: '{{discount}}% off, this week only',
    variables: [{ key: 'discount', type: 'number', fallback_value: 20 }, { key: 'shop_url', type: 'string', fallback_value: 'https://example.com/shop' }],
    layout: {
      sections: [
        { columns: [[{ type: 'preheader', text: 'Our biggest sale of the season' }, ...header]] },
        { columns: [[
          { type: 'heading', text: '{{discount}}% off everything', level: 1, align: 'center' },
          { type: 'text', text: 'Use the button below before the sale ends.', align: 'center' },
          { type: 'countdown', until: '2030-01-01T00:00:00Z', label: 'Sale ends' },
          { type: 'button', text: 'Shop the sale', href: '{{shop_url}}', align: 'center' },
        ]] },
        footer,
      ],
    },
  },
  {
    slug: 'abandoned-cart',
    name: 'Abandoned cart',
    subject: 'You left something behind',
    variables: [],
    layout: {
      sections: [
        { columns: [[{ type: 'preheader', text: 'Your cart is waiting for you' }, ...header]] },
        { columns: [[
          { type: 'heading', text: 'Still thinking it over?', level: 1 },
          { type: 'text', text: 'Your cart is saved. Pick up where you left off.' },
          { type: 'cart', button_text: 'Return to your cart' },
        ]] },
        { columns: [[{ type: 'heading', text: 'You might also like', level: 2 }, { type: 'recommended' }]] },
        footer,
      ],
    },
  },
];

export const starterBySlug = (slug: string) => starters.find((s) => s.slug === slug);
