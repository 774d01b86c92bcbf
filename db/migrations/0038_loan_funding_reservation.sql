-- The number of a loan's latest reservation of its principal: each reservation takes the next
-- (under the loan's write token, so two runs cannot both take one). A live transfer names the
-- reservation it is made under, and a sender's record refuses to sign for a reservation it has
-- closed: a funding run left over from an earlier reservation (a loan object reset mid-run, two
-- objects owning the loan after a LOAN_SHARDS change) can then never send once the loan has been
-- released and reserved again, perhaps from another wallet. 0 for loans reserved before this.
ALTER TABLE loans ADD COLUMN funding_reservation INTEGER NOT NULL DEFAULT 0;
