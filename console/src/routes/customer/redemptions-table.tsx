import { ConfirmButton } from '../../components/confirm-button';
import { formatPoints, formatTime } from '../../lib/format';
import { useCustomerActions, type Redemption } from './use-customer';

export function RedemptionsTable({ identifier, redemptions }: { identifier: string; redemptions: Redemption[] }) {
  const { markUsed, voidRedemption } = useCustomerActions(identifier);
  if (redemptions.length === 0) return <p>No redemptions yet.</p>;
  return (
    <div className="table-scroll" tabIndex={0} role="region" aria-label="Redemptions">
      <table>
        <thead>
          <tr>
            <th scope="col">Reward</th>
            <th scope="col">Code</th>
            <th scope="col" className="number">Points</th>
            <th scope="col">Status</th>
            <th scope="col">Redeemed</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {redemptions.map((r) => (
            <tr key={r.id}>
              <td>{r.reward.name}</td>
              <td>
                <code>{r.code}</code>
              </td>
              <td className="number">{formatPoints(r.points_spent)}</td>
              <td>{r.status}</td>
              <td>{formatTime(r.created_at)}</td>
              <td className="actions">
                {r.status === 'issued' ? (
                  <ConfirmButton
                    label="Mark used"
                    title={`Mark ${r.code} used?`}
                    question="The code counts as consumed by the shop: it can no longer be used."
                    confirmLabel="Mark used"
                    onConfirm={() => markUsed.mutateAsync(r.id)}
                  />
                ) : null}
                {r.status === 'issued' ? (
                  <ConfirmButton
                    label="Void"
                    title={`Void ${r.code}?`}
                    question={`The code stops working and ${formatPoints(r.points_spent)} points go back to the customer.`}
                    confirmLabel="Void redemption"
                    onConfirm={() => voidRedemption.mutateAsync(r.id)}
                  />
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
