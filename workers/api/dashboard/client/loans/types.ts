/** The shapes of `/v1` the loan, review, borrower and settlement pages read (the OpenAPI document is the reference). */
export type ListPage<T> = { data: T[]; nextCursor: string | null };

export type Decision = {
  outcome: "APPROVED" | "DECLINED" | "MANUAL_REVIEW";
  reasons: { code: string; message: string }[];
  policyVersion: number | null;
  decidedAt: string | null;
  reviewedBy: string | null;
  reviewedAt: string | null;
  reviewNote: string | null;
};

export type Agreement = {
  id: string;
  walletAddress: string;
  chain: string;
  message: string;
  agreementText: string;
  walletSignature: string;
  createdAt: string;
};

export type Loan = {
  id: string;
  status: "CREATED" | "ACTIVE" | "REPAID" | "DEFAULTED";
  derivedStatus: "CREATED" | "ACTIVE" | "REPAID" | "DEFAULTED" | "DECLINED";
  loanProductId: string;
  borrowerId: string;
  borrowerRef: string;
  borrowerWalletAddress: string;
  chain: string;
  mode: "sandbox" | "live";
  stablecoin: string;
  principalAmount: string;
  processingFee: string;
  lateFee: string;
  totalDue: string;
  amountPaid: string;
  amountDue: string;
  surplus: string;
  tenureDays: number;
  gracePeriodDays: number;
  decision: Decision | null;
  fundingState: string;
  overdue: boolean;
  dueAt: string | null;
  fundedAt: string | null;
  repaidAt: string | null;
  defaultedAt: string | null;
  createdAt: string;
  fundingTxHash: string | null;
  program: string | null;
  channel: string | null;
  agreement?: Agreement | null;
};

export type LoanEvent = { id: string; type: string; createdAt: string; mode: string };

export type Settlement = {
  id: string;
  kind: string;
  status: string;
  amount: string;
  chain: string;
  asset: string;
  txHash: string | null;
  blockNumber: number | null;
  from: string | null;
  to: string | null;
  createdAt: string;
};

export type Delivery = {
  id: string;
  eventId: string;
  eventType: string;
  url: string;
  status: string;
  attempts: { attempt: number; responseStatus: number | null; error: string | null; startedAt: string }[];
  createdAt: string;
};

export type Unmatched = {
  id: string;
  chain: string;
  mode: "sandbox" | "live";
  txHash: string;
  from: string;
  to: string;
  token: string;
  amount: string;
  asset: string | null;
  comment: string | null;
  claimedLoanId: string | null;
  reason: string;
  settles: boolean;
  attributedLoanId: string | null;
  attributedAt: string | null;
  createdAt: string;
};

export type Borrower = {
  id: string;
  borrowerRef: string;
  kyc: { status: "PENDING" | "VERIFIED" | "FAILED" | string; verifiedAt: string | null; merchantUserId: string | null };
  kycAudit: { id: string; fromStatus: string; toStatus: string; merchantUserId: string | null; actor: string; createdAt: string }[];
  createdAt: string;
};
