import { call } from './http.js';

/** A published template of the team (what a send_email step or a broadcast may name); answers its id. */
export async function publishedTemplate(baseUrl: string, token: string, body: Record<string, unknown> = {}): Promise<string> {
  const created = await call(baseUrl, 'POST', '/templates', {
    token, body: { name: 'Flow mail', subject: 'Hello', html: '<p>Hello {{{contact.first_name|there}}}. <a href="{{{UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>', ...body },
  });
  if (created.status !== 201) throw new Error(`POST /templates: ${JSON.stringify(created.body)}`);
  const published = await call(baseUrl, 'POST', `/templates/${created.body.id}/publish`, { token });
  if (published.status !== 200) throw new Error(`publish: ${JSON.stringify(published.body)}`);
  return created.body.id as string;
}
