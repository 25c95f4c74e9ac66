import { ConfirmButton } from '../../components/confirm-button';
import { ScrollTable, type Column } from '../../components/scroll-table';
import { formatPoints, formatTime } from '../../lib/format';
import { labelOf, REDEMPTION_STATUSES } from '../../lib/labels';
import { useCustomerActions, type Redemption } from './use-customer';

const COLUMNS: Column[] = [
  { label: 'Reward' },
  { label: 'Code' },
  { label: 'Points', numeric: true },
  { label: 'Status' },
  { label: 'Redeemed' },
  { label: 'Actions' },
];

export function RedemptionsTable({ identifier, redemptions }: { identifier: string; redemptions: Redemption[] }) {
  const { markUsed, voidRedemption } = useCustomerActions(identifier);
  if (redemptions.length === 0) return <p>No redemptions yet.</p>;
  return (
    <ScrollTable label="Redemptions" columns={COLUMNS}>
      {redemptions.map((r) => (
        <tr key={r.id}>
          <td>{r.reward.name}</td>
          <td>
            <code>{r.code}</code>
          </td>
          <td className="number">{formatPoints(r.points_spent)}</td>
          <td>{labelOf(REDEMPTION_STATUSES, r.status)}</td>
          <td>{formatTime(r.created_at)}</td>
          <td className="actions">
            {r.status === 'issued' ? (
              <>
                <ConfirmButton
                  label="Mark used"
                  name={`Mark used: ${r.code}`}
                  title={`Mark ${r.code} used?`}
                  question="The code counts as consumed by the shop: it can no longer be used."
                  confirmLabel="Mark used"
                  onConfirm={() => markUsed.mutateAsync(r.id)}
                />
                <ConfirmButton
                  label="Void"
                  name={`Void ${r.code}`}
                  danger
                  title={`Void ${r.code}?`}
                  question={`The code stops working and ${formatPoints(r.points_spent)} points go back to the customer.`}
                  confirmLabel="Void redemption"
                  onConfirm={() => voidRedemption.mutateAsync(r.id)}
                />
              </>
            ) : null}
          </td>
        </tr>
      ))}
    </ScrollTable>
  );
}
