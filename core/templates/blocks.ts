import { validationError } from '../errors.js';
import { escapeHtml, type Condition } from './render.js';

// The blocks of a visual template, each written as MJML. Every text a block holds is escaped
// here (placeholders survive escaping as written); links are web, mail or phone addresses or a
// placeholder. Brand tokens style them, so a brand kit change shows in the next send.

export const blockKinds = [
  'heading', 'text', 'image', 'button', 'divider', 'spacer', 'social', 'footer', 'card', 'video', 'menu', 'countdown', 'html',
  'preheader', 'cart', 'product', 'recommended',
] as const;
export type BlockKind = (typeof blockKinds)[number];

export type Block = { type: BlockKind } & Record<string, unknown>;

/** What writing a block may need beyond the block: markers for conditional parts and repeats. */
export interface BlockWriter {
  /** Wraps MJML in a condition marker (a part shown only when it has a value). */
  when(condition: Extract<Condition, { kind: 'brand' | 'data' }>, mjml: string): string;
  /** Wraps MJML drawn once per item of `source` (at most 50). */
  repeat(source: string[], mjml: string): string;
  /** The sanitised `html` block. */
  html(raw: string): string;
}

const font = 'font-family="{{brand.font}}"';
const socialNetworks = ['facebook', 'x', 'instagram', 'linkedin', 'youtube', 'tiktok', 'github', 'pinterest'];

const str = (block: Block, key: string, path: string, { required = false, max = 10_000 } = {}): string => {
  const value = block[key];
  if (value === undefined || value === null) {
    if (required) throw validationError(422, `${path}.${key}`, `A ${block.type} block needs \`${key}\`.`);
    return '';
  }
  if (typeof value !== 'string' || value.length > max) throw validationError(422, `${path}.${key}`, `\`${key}\` is text of at most ${max} characters.`);
  return value;
};

/** A link a block may hold: http(s), mailto, tel, or a placeholder that will be one. */
export function link(block: Block, key: string, path: string, required = true): string {
  const value = str(block, key, path, { required, max: 2048 }).trim();
  if (value === '' && !required) return '';
  if (!/^(https?:\/\/|mailto:|tel:|\{\{)/i.test(value) || /[\s<>"]/.test(value.replace(/\{\{\{?[^}]*\}\}\}?/g, ''))) {
    throw validationError(422, `${path}.${key}`, `\`${key}\` must be an http(s), mailto: or tel: address (or a placeholder).`);
  }
  return escapeHtml(value);
}

const align = (block: Block) => (['left', 'center', 'right'].includes(block.align as string) ? block.align as string : 'left');
const paragraphs = (text: string) => escapeHtml(text).replace(/\r?\n/g, '<br />');

/** One block as MJML (inside a column). */
export function blockMjml(block: Block, path: string, w: BlockWriter): string {
  switch (block.type) {
    case 'preheader':
      return '';
    case 'heading': {
      const level = [1, 2, 3].includes(block.level as number) ? block.level as number : 1;
      const size = { 1: '28px', 2: '22px', 3: '18px' }[level];
      return `<mj-text ${font} font-size="${size}" font-weight="700" line-height="1.3" color="{{brand.primary_color}}" align="${align(block)}"><h${level} style="margin:0;font-size:${size}">${paragraphs(str(block, 'text', path, { required: true, max: 500 }))}</h${level}></mj-text>`;
    }
    case 'text':
      return `<mj-text ${font} font-size="16px" line-height="1.6" color="#1f2937" align="${align(block)}">${paragraphs(str(block, 'text', path, { required: true }))}</mj-text>`;
    case 'image':
      // The brand's logo shows only when the kit has one.
      return block.src === '{{brand.logo_url}}' ? w.when({ kind: 'brand', token: 'logo_url' }, imageMjml(block, path)) : imageMjml(block, path);
    case 'button':
      return buttonMjml(str(block, 'text', path, { required: true, max: 200 }), link(block, 'href', path), align(block) === 'left' ? 'center' : align(block));
    case 'divider':
      return '<mj-divider border-width="1px" border-color="#e5e7eb" />';
    case 'spacer': {
      const height = Number.isInteger(block.height) && (block.height as number) >= 4 && (block.height as number) <= 200 ? block.height : 24;
      return `<mj-spacer height="${height}px" />`;
    }
    case 'social':
      return socialMjml(block, path);
    case 'footer':
      return footerMjml(block, path, w);
    case 'card':
      return cardMjml(block, path);
    case 'video': {
      const thumb = link(block, 'thumbnail_url', path);
      const alt = escapeHtml(str(block, 'alt', path, { max: 500 }) || 'Play video');
      return `<mj-image src="${thumb}" href="${link(block, 'href', path)}" alt="${alt}" />`
        + `<mj-text ${font} align="center" font-size="14px" color="#6b7280">&#9654; ${alt}</mj-text>`;
    }
    case 'menu':
      return menuMjml(block, path);
    case 'countdown':
      return countdownMjml(block, path);
    case 'html':
      return `<mj-text ${font} font-size="16px" line-height="1.6" color="#1f2937">${w.html(str(block, 'html', path, { required: true, max: 100_000 }))}</mj-text>`;
    case 'cart':
      return cartMjml(block, path, w);
    case 'product':
      return productMjml(block, path);
    case 'recommended':
      return w.repeat(['event', 'recommendations'], itemCard(str(block, 'button_text', path, { max: 200 }) || 'View'));
  }
}

function imageMjml(block: Block, path: string): string {
  const href = link(block, 'href', path, false);
  const width = Number.isInteger(block.width) && (block.width as number) > 0 && (block.width as number) <= 600 ? ` width="${block.width}px"` : '';
  const alt = escapeHtml(str(block, 'alt', path, { max: 500 }));
  return `<mj-image src="${link(block, 'src', path)}" alt="${alt}"${href ? ` href="${href}"` : ''}${width} />`;
}

const buttonMjml = (text: string, href: string, where: string) =>
  `<mj-button ${font} href="${href}" align="${where}" background-color="{{brand.accent_color}}" color="#ffffff" border-radius="{{brand.button_radius}}" font-size="16px" inner-padding="12px 24px">${escapeHtml(text)}</mj-button>`;

function socialMjml(block: Block, path: string): string {
  const links = Array.isArray(block.links) ? block.links as Block[] : [];
  if (!links.length || links.length > 10) throw validationError(422, `${path}.links`, 'A social block has 1-10 `links` of `{ network, href }`.');
  const items = links.map((l, i) => {
    const network = typeof l?.network === 'string' && socialNetworks.includes(l.network) ? l.network : undefined;
    if (!network) throw validationError(422, `${path}.links[${i}].network`, `\`network\` is one of ${socialNetworks.join(', ')}.`);
    const name = network === 'x' ? 'x' : network;
    return `<mj-social-element name="${name}" href="${link(l, 'href', `${path}.links[${i}]`)}">${escapeHtml(network)}</mj-social-element>`;
  });
  return `<mj-social ${font} mode="horizontal" icon-size="24px" font-size="13px" color="#374151">${items.join('')}</mj-social>`;
}

function footerMjml(block: Block, path: string, w: BlockWriter): string {
  const extra = str(block, 'text', path, { max: 1000 });
  const unsubscribe = w.when({ kind: 'data', path: ['contact', 'unsubscribe_url'] },
    `<mj-text ${font} align="center" font-size="12px" color="#6b7280"><a href="{{{contact.unsubscribe_url}}}" style="color:#6b7280">Unsubscribe</a></mj-text>`);
  return `<mj-text ${font} align="center" font-size="12px" line-height="1.5" color="#6b7280">{{brand.company_name}}<br />{{brand.address}}<br />{{brand.footer_text}}${extra ? `<br />${paragraphs(extra)}` : ''}</mj-text>${unsubscribe}`;
}

function cardMjml(block: Block, path: string): string {
  const image = block.image_url ? `<mj-image src="${link(block, 'image_url', path)}" alt="${escapeHtml(str(block, 'image_alt', path, { max: 500 }))}" />` : '';
  const button = block.button_href ? buttonMjml(str(block, 'button_text', path, { max: 200 }) || 'Learn more', link(block, 'button_href', path), 'left') : '';
  return `${image}<mj-text ${font} font-size="18px" font-weight="700" color="{{brand.primary_color}}">${paragraphs(str(block, 'title', path, { required: true, max: 500 }))}</mj-text>`
    + `<mj-text ${font} font-size="15px" line-height="1.6" color="#374151">${paragraphs(str(block, 'text', path))}</mj-text>${button}`;
}

function menuMjml(block: Block, path: string): string {
  const items = Array.isArray(block.items) ? block.items as Block[] : [];
  if (!items.length || items.length > 8) throw validationError(422, `${path}.items`, 'A menu block has 1-8 `items` of `{ text, href }`.');
  const links = items.map((item, i) => `<a href="${link(item, 'href', `${path}.items[${i}]`)}" style="color:{{brand.accent_color}};text-decoration:none">${escapeHtml(str(item, 'text', `${path}.items[${i}]`, { required: true, max: 100 }))}</a>`);
  return `<mj-text ${font} align="center" font-size="14px">${links.join(' &nbsp;|&nbsp; ')}</mj-text>`;
}

/** A static line (a live countdown image needs a service svc does not run): the end written out in UTC. */
function countdownMjml(block: Block, path: string): string {
  const until = Date.parse(str(block, 'until', path, { required: true, max: 64 }));
  if (Number.isNaN(until)) throw validationError(422, `${path}.until`, '`until` is an ISO 8601 instant.');
  const when = new Intl.DateTimeFormat('en-US', { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' }).format(new Date(until));
  const label = str(block, 'label', path, { max: 200 }) || 'Ends';
  return `<mj-text ${font} align="center" font-size="20px" font-weight="700" color="{{brand.primary_color}}">${escapeHtml(label)} ${escapeHtml(when)} UTC</mj-text>`;
}

/** A store trigger's items (`event.items`), one row each, then the checkout button. */
function cartMjml(block: Block, path: string, w: BlockWriter): string {
  const row = `<mj-text ${font} font-size="15px" color="#1f2937"><strong>{{{item.title}}}</strong> {{{item.variant}}}<br />`
    + 'Qty {{{item.quantity|1}}} &middot; {{{item.price||currency:USD}}}</mj-text>';
  const button = buttonMjml(str(block, 'button_text', path, { max: 200 }) || 'Return to your cart', '{{{event.checkout_url}}}', 'center');
  return w.repeat(['event', 'items'], row) + w.when({ kind: 'data', path: ['event', 'checkout_url'] }, button);
}

function productMjml(block: Block, path: string): string {
  const image = block.image_url ? `<mj-image src="${link(block, 'image_url', path)}" alt="${escapeHtml(str(block, 'title', path, { max: 500 }))}" />` : '';
  const price = str(block, 'price', path, { max: 100 });
  return `${image}<mj-text ${font} font-size="18px" font-weight="700" color="{{brand.primary_color}}">${paragraphs(str(block, 'title', path, { required: true, max: 500 }))}</mj-text>`
    + (price ? `<mj-text ${font} font-size="16px" color="#374151">${escapeHtml(price)}</mj-text>` : '')
    + buttonMjml(str(block, 'button_text', path, { max: 200 }) || 'Shop now', link(block, 'href', path), 'left');
}

const itemCard = (buttonText: string) => '<mj-image src="{{{item.image_url}}}" alt="{{{item.title}}}" width="200px" />'
  + `<mj-text ${font} align="center" font-size="15px"><strong>{{{item.title}}}</strong><br />{{{item.price||currency:USD}}}</mj-text>`
  + buttonMjml(buttonText, '{{{item.url}}}', 'center');
