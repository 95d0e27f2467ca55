"""Writes for jobs and uploads, by concern. Every state change is one guarded UPDATE (states.transition).

- intake: a create request (consent, the uploaded files, the quote, the credit hold) becomes a job.
- lifecycle: the state machine from screening to an end (enqueue, start, progress, succeed, fail,
  reject, review), with the charge captured or released on the way out.
- user_actions: what an owner does to a job (cancel, delete, star, run again).
- maintenance: the sweeper that moves on stranded jobs, and the purge of expired results.
- stored_files: deleting what a job stored in S3 (its originals, its result).
- webhook_outbox: the webhook a final state owes, as a row; enqueued again until delivered.

Credits: hold at submit, capture at success, release on every other exit (billing enforces once).
Work is enqueued only through `dispatch`, after the transaction that made it due has committed.
"""
