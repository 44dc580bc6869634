import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import type { Logger } from '../../core/logger.js';
import type { PageRequest, PreferencePage, PreferencesService } from '../../core/preferences/index.js';
import { sendPage, type HtmlPage } from './html.js';
import {
  formRefusedPage, linkNotFoundPage, pageFailedPage, preferencesPage, unsubscribedPage, unsubscribeQuestion,
} from './preference-pages.js';

// The unsubscribe and preference links of a contact's mail, outside the contract layer (no key,
// no team token, no request log), behind the per-client bucket. The token in the path is the
// capability (and the CSRF defence: a form posted from elsewhere cannot know it); a path without
// one is not these routes (the contract layer's 404). Every token that is not genuine or no
// longer names its contact gets the same 404 page.
//
// A GET never changes anything: mail scanners and link previews fetch every link in a message.
// POST /unsubscribe/<token> is RFC 8058's one-click endpoint and the unsubscribe page's button.
// Receivers send `List-Unsubscribe=One-Click` as form-data or url-encoded; the POST itself is the
// request, so its body is not read.

type TokenRequest = Request<{ token: string }>;

const formBody = express.urlencoded({ extended: false, limit: '256kb', parameterLimit: 4096 });

/** The url-encoded form of the preference page; a malformed or oversized one is a plain page too. */
const form: RequestHandler = (req, res, next) => formBody(req, res, (err?: unknown) => {
  if (!err) return next();
  const status = (err as { status?: number }).status ?? 400;
  sendPage(res, status >= 400 && status < 500 ? status : 400, formRefusedPage());
});

/** A form field's values: one string, or several when the name repeats. */
const list = (value: unknown): string[] => {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
};

const pageRequest = (req: Request): PageRequest => ({ ip: req.ip ?? req.socket.remoteAddress ?? null, userAgent: req.get('user-agent') ?? null });

export function preferenceRoutes(router: Router, limited: RequestHandler, preferences: PreferencesService, logger: Logger): void {
  const answer = (what: string, render: (req: TokenRequest) => Promise<HtmlPage | undefined | { status: number; page: HtmlPage }>) =>
    async (req: TokenRequest, res: Response) => {
      try {
        const out = await render(req);
        if (!out) return sendPage(res, 404, linkNotFoundPage());
        if ('status' in out) return sendPage(res, out.status, out.page);
        sendPage(res, 200, out);
      } catch (err) {
        logger.error({ err: (err as Error).message, page: what }, 'preference page failed');
        sendPage(res, 500, pageFailedPage());
      }
    };
  const shown = (page: PreferencePage | undefined, render: (page: PreferencePage) => HtmlPage) => (page ? render(page) : undefined);

  router.get('/unsubscribe/:token', limited, answer('unsubscribe', async (req) =>
    shown(await preferences.page(req.params.token), (page) => unsubscribeQuestion(page, req.params.token))));
  router.post('/unsubscribe/:token', limited, answer('one-click unsubscribe', async (req) =>
    shown(await preferences.oneClickUnsubscribe(req.params.token, pageRequest(req)), (page) => unsubscribedPage(page, req.params.token))));
  router.get('/preferences/:token', limited, answer('preferences', async (req) =>
    shown(await preferences.page(req.params.token), (page) => preferencesPage(page))));
  router.post('/preferences/:token', limited, form, answer('preferences form', (req) => submitted(preferences, req)));
}

async function submitted(preferences: PreferencesService, req: TokenRequest) {
  const { token } = req.params;
  const body = (req.body ?? {}) as Record<string, unknown>;
  const request = pageRequest(req);
  switch (body.action) {
    case 'save': {
      const page = await preferences.saveTopics(token, { shown: list(body.shown), checked: list(body.topic) }, request);
      return page && preferencesPage(page, 'Your preferences are saved.');
    }
    case 'unsubscribe_all': {
      const page = await preferences.unsubscribeAll(token, request);
      return page && preferencesPage(page, 'You are unsubscribed from everything.');
    }
    case 'resubscribe': {
      const page = await preferences.resubscribe(token, request);
      return page && preferencesPage(page, 'You are subscribed again. Choose your topics below.');
    }
    default: {
      const page = await preferences.page(token);
      return page && { status: 400, page: preferencesPage(page, 'Nothing was changed: the form named no action.') };
    }
  }
}
