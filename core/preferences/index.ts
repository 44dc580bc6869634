// The preferences area's public face (audience tier): a contact's unsubscribe and preference
// links — minted per recipient for broadcasts, with their List-Unsubscribe headers — and what the
// public pages behind them read and change. Contacts' writes stay in core/contacts.
export {
  preferencesPath, preferencesService, unsubscribePath,
  type PageRequest, type PreferencesDeps, type PreferencesService, type RecipientLinks, type TopicForm,
} from './service.js';
export type { PreferencePage, PreferenceTopic, SenderIdentity } from './page.js';
