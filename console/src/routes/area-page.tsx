import { RecordSection } from '../components/record-section';
import { AREA_LINKS, PROGRAMME_SECTIONS, type AreaRoute, type ProgrammeSection } from '../lib/areas';
import { apiTokens } from './access/api-tokens';
import { AuditLogPage } from './access/audit-log-page';
import { CampaignsSection } from './programme/campaigns';
import { earningRules, rewards, vipTiers } from './programme/kinds';
import { ShopSettings } from './programme/shop-settings';
import { referrals } from './referrals/kinds';
import { storefrontKeys } from './storefront/kinds';
import { DeliveriesPage } from './webhooks/deliveries-page';
import { webhooks } from './webhooks/kinds';
import { ConnectionDeliveriesPage } from './connections/deliveries-page';
import { connections } from './connections/kinds';
import './areas.css';

/** The links of the console's navigation to these areas. */
export function AreaLinks({ page }: { page: string }) {
  return AREA_LINKS.map((link) => (
    <a key={link.href} href={link.href} aria-current={(link.pages as readonly string[]).includes(page) ? 'page' : undefined}>
      {link.label}
    </a>
  ));
}

export function AreaPage({ route }: { route: AreaRoute }) {
  switch (route.page) {
    case 'programme':
      return <ProgrammePage section={route.section} />;
    case 'webhooks':
      return <RecordSection key={route.page} kind={webhooks} />;
    case 'webhook':
      return <DeliveriesPage id={route.id} />;
    case 'connections':
      return <RecordSection key={route.page} kind={connections} />;
    case 'connection':
      return <ConnectionDeliveriesPage id={route.id} />;
    case 'referrals':
      return <RecordSection key={route.page} kind={referrals} />;
    case 'storefront-keys':
      return <RecordSection key={route.page} kind={storefrontKeys} />;
    case 'api-tokens':
      return <RecordSection key={route.page} kind={apiTokens} />;
    case 'audit-log':
      return <AuditLogPage />;
  }
}

function ProgrammePage({ section }: { section: ProgrammeSection }) {
  return (
    <>
      <nav aria-label="Programme" className="tabs">
        {PROGRAMME_SECTIONS.map((s) => (
          <a key={s.slug} href={`#/programme/${s.slug}`} aria-current={s.slug === section ? 'page' : undefined}>
            {s.label}
          </a>
        ))}
      </nav>
      {section === 'earning-rules' ? (
        <RecordSection key={section} kind={earningRules} />
      ) : section === 'rewards' ? (
        <RecordSection key={section} kind={rewards} />
      ) : section === 'vip-tiers' ? (
        <RecordSection key={section} kind={vipTiers} />
      ) : section === 'campaigns' ? (
        <CampaignsSection />
      ) : (
        <ShopSettings />
      )}
    </>
  );
}
