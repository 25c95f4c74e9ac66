import { ConfirmButton } from '../../components/confirm-button';
import type { RecordKind } from '../../components/record-section';
import { useClient } from '../../lib/api';
import { formatTime } from '../../lib/format';
import { labelOf, REFERRAL_STATUSES } from '../../lib/labels';
import { recordApi, type Row } from '../../lib/records';
import { customerHref } from '../../lib/router';

const PATH = '/merchant_api/v1/referrals';

/** When a referral ended, completed or cancelled; blank while pending. */
const ended = (r: Row) => (r.completed_at ? formatTime(String(r.completed_at)) : r.cancelled_at ? formatTime(String(r.cancelled_at)) : '—');

export const referrals: RecordKind = {
  path: PATH,
  title: 'Referrals',
  singular: 'referral',
  empty: 'No referrals yet.',
  columns: [
    { label: 'ID', cell: (r) => r.id },
    { label: 'Referrer', cell: (r) => <a href={customerHref(Number(r.referrer_remote_id))}>{String(r.referrer_remote_id)}</a> },
    { label: "Friend's e-mail", cell: (r) => String(r.referred_email) },
    { label: 'Status', cell: (r) => labelOf(REFERRAL_STATUSES, r.status) },
    { label: 'Created', cell: (r) => formatTime(String(r.created_at)) },
    { label: 'Completed or cancelled', cell: ended },
  ],
  fields: [
    { name: 'customer_identifier', label: 'Referrer', kind: 'text', placeholder: 'remote_id or e-mail', aliases: ['referrer_remote_id', 'referral_code'] },
    { name: 'referred_email', label: "Friend's e-mail", kind: 'text' },
  ],
  actions: (r, refresh) => (r.status === 'pending' ? <PendingActions row={r} refresh={refresh} /> : null),
};

/** What the API lets a merchant do with a pending referral: complete it (both sides earn) or cancel it. */
function PendingActions({ row, refresh }: { row: Row; refresh: () => Promise<void> }) {
  const api = recordApi(useClient(), PATH);
  return (
    <>
      <ConfirmButton
        label="Complete"
        name={`Complete referral ${row.id}`}
        title={`Complete referral ${row.id}?`}
        question={`The referral rules reward both sides now, as if ${String(row.referred_email)} had made a first paid order.`}
        confirmLabel="Complete referral"
        onConfirm={() => api.action(row.id, 'complete').finally(refresh)}
      />
      <ConfirmButton
        label="Cancel referral"
        name={`Cancel referral ${row.id}`}
        danger
        title={`Cancel referral ${row.id}?`}
        question={`Nobody earns from it, and ${String(row.referred_email)} can be referred again.`}
        confirmLabel="Cancel the referral"
        onConfirm={() => api.action(row.id, 'cancel').finally(refresh)}
      />
    </>
  );
}
