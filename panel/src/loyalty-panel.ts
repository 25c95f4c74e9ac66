import type { StorefrontClient } from '../../client/src/storefront.js';
import { inWords, panelClient } from './client.js';
import { STYLES } from './styles.js';
import { render, type State } from './view.js';

// <loyalty-panel api-base="…" publishable-key="pk_…" token="…" | token-url="…">: a shopper's
// own loyalty account on the merchant's page (docs/storefront.md). A plain custom element
// with shadow DOM and no framework, so it costs the host page one small module.

const HISTORY_SIZE = 10;

const newKey = () => (typeof crypto.randomUUID === 'function' ? crypto.randomUUID() : `${Date.now()}-${Math.random().toString(36).slice(2)}`);

export class LoyaltyPanel extends HTMLElement {
  static readonly observedAttributes = ['api-base', 'publishable-key', 'token', 'token-url'];
  readonly #root: ShadowRoot;
  #client: StorefrontClient | null = null;
  #state: State = { rules: [], ways: [], claiming: null, me: null, rewards: [], events: [], redeemed: null, busy: null, error: null, copied: false };
  /** The reward being redeemed and the Idempotency-Key its retries reuse. */
  #pending: { rewardId: number; key: string } | null = null;
  /** The way to earn being claimed and the Idempotency-Key its retries reuse. */
  #claim: { ruleId: number; key: string } | null = null;

  constructor() {
    super();
    this.#root = this.attachShadow({ mode: 'open' });
    this.#root.addEventListener('click', (event) => this.#clicked(event));
  }

  connectedCallback(): void {
    this.#schedule();
  }

  attributeChangedCallback(): void {
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

  #set(changes: Partial<State>): void {
    this.#state = { ...this.#state, ...changes };
    this.#root.innerHTML = `<style>${STYLES}</style>${render(this.#state)}`;
  }

  /** Reads the account, the rewards and the latest history again. */
  async refresh(): Promise<void> {
    try {
      const [programme, me, rewards, events, ways] = await Promise.all([
        this.#api.GET('/storefront_api/v1/programme'),
        this.#api.GET('/storefront_api/v1/me'),
        this.#api.GET('/storefront_api/v1/me/rewards'),
        this.#api.GET('/storefront_api/v1/me/points_events', {
          params: { query: { 'pagination[per_page]': HISTORY_SIZE, 'sort[order_direction]': 'desc' } },
        }),
        this.#api.GET('/storefront_api/v1/me/ways_to_earn'),
      ]);
      this.#set({ rules: programme.data.earning_rules, ways: ways.data, me: me.data, rewards: rewards.data, events: events.data, error: null });
    } catch (error) {
      this.#set({ error: inWords(error) });
    }
  }

  async #redeem(rewardId: number): Promise<void> {
    // A retry of the same reward after a failure reuses the key: it can never spend twice.
    if (this.#pending?.rewardId !== rewardId) this.#pending = { rewardId, key: newKey() };
    this.#set({ busy: rewardId, error: null, copied: false });
    try {
      const { data } = await this.#api.POST('/storefront_api/v1/me/redemptions', {
        body: { reward_id: rewardId },
        headers: { 'Idempotency-Key': this.#pending.key },
      });
      this.#pending = null;
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
    if (this.#claim?.ruleId !== ruleId) this.#claim = { ruleId, key: newKey() };
    this.#set({ claiming: ruleId, error: null });
    try {
      const { data } = await this.#api.POST('/storefront_api/v1/me/actions', { body: { rule_id: ruleId }, headers: { 'Idempotency-Key': this.#claim.key } });
      this.#claim = null;
      this.dispatchEvent(new CustomEvent('loyalty-earned', { detail: data, bubbles: true, composed: true }));
      this.#state.claiming = null;
      await this.refresh();
    } catch (error) {
      this.#set({ claiming: null, error: inWords(error) });
    }
  }

  async #copy(): Promise<void> {
    const code = this.#state.redeemed?.code;
    if (code === undefined) return;
    try {
      await navigator.clipboard.writeText(code);
      this.#set({ copied: true });
    } catch {
      this.#set({ error: 'The code could not be copied; select it and copy it by hand.' });
    }
  }

  #clicked(event: Event): void {
    const button = (event.target as Element | null)?.closest('button');
    if (button === null || button === undefined || button.disabled) return;
    if (button.dataset.reward !== undefined) void this.#redeem(Number(button.dataset.reward));
    else if (button.dataset.copy !== undefined) void this.#copy();
    else if (button.dataset.claim !== undefined) void this.#claimWay(Number(button.dataset.claim), button.dataset.url);
  }
}

if (!customElements.get('loyalty-panel')) customElements.define('loyalty-panel', LoyaltyPanel);
