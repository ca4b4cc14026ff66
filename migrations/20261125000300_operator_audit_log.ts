/**
 * Who changed what, by hand: `operator_audit_log`, one row per action a person took on the
 * service outside the API (today `npm run ops -- reissue | recover | setup-namespace`). Written
 * only through `src/audit/repository.ts`.
 *
 * - `actor_kind` says which door the action came through (`operator_cli`); `actor` who it was
 *   (the OS user, or the CLI's `--operator`). Other doors (a web portal's users, the codec
 *   endpoint's decodes) can write their own kind here later without a new table.
 * - `action` (`reissue`, …), `target_kind` and `target_id` (`purchase` / `42`, `namespace` /
 *   `insurance`), `root_account_id` when the target belongs to one agency (no foreign key: the
 *   record outlives the account), `reason` as the person gave it (required for `operator_cli`).
 * - `started_at` is written before the action runs (no record, no action); `outcome`
 *   (`succeeded`, `refused`, `failed`), `outcome_detail` (why refused, the error) and
 *   `finished_at` when it ends. A row without an outcome is an action whose process died first.
 * - `details`: what the action answered (the workflow id it started, …), JSON.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('operator_audit_log', (t) => {
    t.bigIncrements('id').primary();
    t.timestamp('started_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('finished_at', { useTz: true }).nullable();
    t.string('actor_kind', 32).notNullable();
    t.string('actor', 200).notNullable();
    t.string('action', 64).notNullable();
    t.string('target_kind', 32).nullable();
    t.string('target_id', 200).nullable();
    t.integer('root_account_id').nullable();
    t.text('reason').nullable();
    t.string('outcome', 16).nullable();
    t.text('outcome_detail').nullable();
    t.jsonb('details').notNullable().defaultTo('{}');
  });
  await knex.raw(
    `alter table operator_audit_log add constraint operator_audit_log_outcome_check check (outcome in ('succeeded','refused','failed'))`,
  );
  await knex.raw(
    `alter table operator_audit_log add constraint operator_audit_log_actor_check check (btrim(actor) <> '' and actor_kind ~ '^[a-z][a-z_]*$')`,
  );
  // An operator's action always says why.
  await knex.raw(
    `alter table operator_audit_log add constraint operator_audit_log_reason_check check (actor_kind <> 'operator_cli' or btrim(coalesce(reason, '')) <> '')`,
  );
  // Newest first is id descending (the primary key); one target's entries (`ops audit --purchase`) by this.
  await knex.raw('create index operator_audit_log_target_idx on operator_audit_log (target_kind, target_id, id desc)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('operator_audit_log');
}
