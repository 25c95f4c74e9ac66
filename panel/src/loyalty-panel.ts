import type { StorefrontClient } from '../../client/src/storefront.js';
import { inWords, panelClient } from './client.js';
import { words, type Words } from './i18n/index.js';
import type { State } from './model.js';
import { STYLES } from './styles.js';
import { render } from './view.js';

// <loyalty-panel api-base="…" publishable-key="pk_…" token="…" | token-url="…">: a shopper's
// own loyalty account on the merchant's page (docs/storefront.md). A plain custom element
// with shadow DOM and no framework, so it costs the host page one small module. It speaks the
// language of its `lang` (else the page's), and any of its strings may be replaced by the
// merchant: the `strings` property, or the attribute as JSON.

const HISTORY_SIZE = 10;
const CODES_SIZE = 5;
/** Attributes that change who the panel talks to: the account is read again. */
const CONNECTION = ['api-base', 'publishable-key', 'token', 'token-url'];

const newKey = () => (typeof crypto.randomUUID === 'function' ? crypto.randomUUID() : `${Date.now()}-${Math.random().toString(36).slice(2)}`);
const latest = (size: number) => ({ params: { query: { 'pagination[per_page]': size, 'sort[order_direction]': 'desc' as const } } });

export class LoyaltyPanel extends HTMLElement {
  static readonly observedAttributes = [...CONNECTION, 'lang', 'strings', 'referral-url'];
  readonly #root: ShadowRoot;
  #client: StorefrontClient | null = null;
  #state: State = {
    programme: null,
    me: null,
    rewards: [],
    ways: [],
    events: [],
    redemptions: [],
    redeemed: null,
    confirm: null,
    busy: null,
    error: null,
    copied: null,
  };
  #strings: Record<string, string> = {};
  /** The reward being redeemed and the Idempotency-Key its retries reuse. */
  #pending: { rewardId: number; key: string } | null = null;
  /** The way to earn being claimed and the Idempotency-Key its retries reuse. */
  #claim: { ruleId: number; key: string } | null = null;
  /** What gets the focus after the next drawing (a selector in the shadow root). */
  #focus: string | null = null;

  constructor() {
    super();
    this.#root = this.attachShadow({ mode: 'open' });
    this.#root.addEventListener('click', (event) => this.#clicked(event));
    this.#root.addEventListener('submit', (event) => this.#submitted(event));
    // Escape closes the confirmation: nothing is spent. `cancel` does not bubble, so it is caught on the way down.
    this.#root.addEventListener('cancel', () => this.#cancel(), true);
  }

  /** The merchant's replacements for any of the panel's strings, by key (panel/src/i18n/en.ts). */
  get strings(): Record<string, string> {
    return this.#strings;
  }

  set strings(value: Record<string, string>) {
    this.#strings = { ...value };
    this.#set({});
  }

  connectedCallback(): void {
    this.#schedule();
  }

  attributeChangedCallback(name: string): void {
    if (!CONNECTION.includes(name)) return this.#set({});
    this.#client = null;
    if (this.isConnected) this.#schedule();
  }

  #scheduled = false;

  /** One refresh for the attributes set together (an upgrade sets each one in turn). */
  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      void this.refresh();
    });
  }

  get #api(): StorefrontClient {
    this.#client ??= panelClient({
      apiBase: (this.getAttribute('api-base') ?? '').replace(/\/+$/, ''),
      publishableKey: this.getAttribute('publishable-key') ?? '',
      token: this.getAttribute('token'),
      tokenUrl: this.getAttribute('token-url'),
    });
    return this.#client;
  }

  /** The shopper's language (this element's lang, else the nearest one above it, else the page's) with the merchant's strings. */
  get #words(): Words {
    let given: Record<string, string> = {};
    try {
      given = JSON.parse(this.getAttribute('strings') ?? '{}') as Record<string, string>;
    } catch {
      // Not JSON: the built-in strings stay.
    }
    return words(this.closest('[lang]')?.getAttribute('lang') ?? document.documentElement.lang, { ...given, ...this.#strings });
  }

  #referralUrl = (code: string): string => {
    const template = this.getAttribute('referral-url') ?? `${location.origin}/?ref={code}`;
    return template.replace('{code}', encodeURIComponent(code));
  };

  #set(changes: Partial<State>): void {
    this.#state = { ...this.#state, ...changes };
    this.#root.innerHTML = `<style>${STYLES}</style>${render(this.#state, this.#words, this.#referralUrl)}`;
    const dialog = this.#root.querySelector('dialog');
    if (dialog !== null && !dialog.open) dialog.showModal();
    if (this.#focus !== null) (this.#root.querySelector(this.#focus) as HTMLElement | null)?.focus();
    this.#focus = null;
  }

  /** Reads the programme, the account, the rewards, the ways to earn, the latest codes and history again. */
  async refresh(): Promise<void> {
    try {
      const [programme, me, rewards, ways, redemptions, events] = await Promise.all([
        this.#api.GET('/storefront_api/v1/programme'),
        this.#api.GET('/storefront_api/v1/me'),
        this.#api.GET('/storefront_api/v1/me/rewards'),
        this.#api.GET('/storefront_api/v1/me/ways_to_earn'),
        this.#api.GET('/storefront_api/v1/me/redemptions', latest(CODES_SIZE)),
        this.#api.GET('/storefront_api/v1/me/points_events', latest(HISTORY_SIZE)),
      ]);
      this.#set({
        programme: programme.data,
        me: me.data,
        rewards: rewards.data,
        ways: ways.data,
        redemptions: redemptions.data,
        events: events.data,
        error: null,
      });
    } catch (error) {
      this.#set({ error: inWords(error) });
    }
  }

  async #redeem(rewardId: number): Promise<void> {
    // A retry of the same reward after a failure reuses the key: it can never spend twice.
    if (this.#pending?.rewardId !== rewardId) this.#pending = { rewardId, key: newKey() };
    this.#set({ confirm: null, busy: `redeem:${rewardId}`, error: null, copied: null });
    try {
      const { data } = await this.#api.POST('/storefront_api/v1/me/redemptions', {
        body: { reward_id: rewardId },
        headers: { 'Idempotency-Key': this.#pending.key },
      });
      this.#pending = null;
      this.#focus = '[part=code-section] button';
      this.#set({ redeemed: data, busy: null });
      this.dispatchEvent(new CustomEvent('loyalty-redeemed', { detail: data, bubbles: true, composed: true }));
      await this.refresh();
    } catch (error) {
      this.#set({ busy: null, error: inWords(error) });
    }
  }

  /** Claims a way to earn; a visit opens its page first (in the click, so no popup blocker stops it). */
  async #claimWay(ruleId: number, url: string | undefined): Promise<void> {
    if (url !== undefined) window.open(url, '_blank', 'noopener');
    // A retry of the same claim after a failure reuses the key: it can never grant twice.
    if (this.#claim?.ruleId !== ruleId) this.#claim = { ruleId, key: newKey() };
    this.#set({ busy: `claim:${ruleId}`, error: null });
    try {
      const { data } = await this.#api.POST('/storefront_api/v1/me/actions', { body: { rule_id: ruleId }, headers: { 'Idempotency-Key': this.#claim.key } });
      this.#claim = null;
      this.#state.busy = null;
      this.dispatchEvent(new CustomEvent('loyalty-earned', { detail: data, bubbles: true, composed: true }));
      await this.refresh();
    } catch (error) {
      this.#set({ busy: null, error: inWords(error) });
    }
  }

  async #saveBirthday(birthday: string): Promise<void> {
    this.#set({ busy: 'birthday', error: null });
    try {
      const { data } = await this.#api.PUT('/storefront_api/v1/me/birthday', { body: { birthday }, headers: { 'Idempotency-Key': newKey() } });
      this.#set({ me: data, busy: null });
    } catch (error) {
      this.#set({ busy: null, error: inWords(error) });
    }
  }

  async #copy(text: string): Promise<void> {
    try {
      await navigator.clipboard.writeText(text);
      this.#set({ copied: text });
    } catch {
      this.#set({ error: 'err_copy' });
    }
  }

  #clicked(event: Event): void {
    const button = (event.target as Element | null)?.closest('button');
    if (button === null || button === undefined || button.disabled) return;
    const id = Number(button.dataset.id);
    const action = button.dataset.action;
    if (action === 'redeem') {
      this.#set({ confirm: id, error: null });
    } else if (action === 'confirm') {
      void this.#redeem(id);
    } else if (action === 'cancel') {
      this.#cancel();
    } else if (action === 'copy') {
      void this.#copy(button.dataset.text ?? '');
    } else if (action === 'claim') {
      void this.#claimWay(id, button.dataset.url);
    }
  }

  /** The confirmation closed without spending: the focus goes back to the reward's button. */
  #cancel(): void {
    this.#focus = `[data-action=redeem][data-id="${this.#state.confirm}"]`;
    this.#set({ confirm: null });
  }

  #submitted(event: Event): void {
    const form = event.target as HTMLFormElement;
    if (form.dataset.action !== 'birthday') return;
    event.preventDefault();
    const value = (form.elements.namedItem('birthday') as HTMLInputElement).value;
    if (value !== '') void this.#saveBirthday(value);
  }
}

if (!customElements.get('loyalty-panel')) customElements.define('loyalty-panel', LoyaltyPanel);
