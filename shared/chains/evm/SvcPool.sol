// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// The slice of ERC-20 the pool uses.
interface IERC20 {
    function transfer(address to, uint256 amount) external returns (bool);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}

/// svc credit pool: takes repayments in one stablecoin without holding them, and (sandbox simulator
/// only) funds loans for an operator. Non-custodial: `repay` moves the payer's stablecoin straight to
/// the collections address the repayment instructions name (the tenant's COLLECTIONS wallet on a
/// live chain), so the pool never holds a repayment.
/// A loan id is the loan's UUID as 16 bytes, left-aligned in a bytes32 (see loan-id.ts).
contract SvcPool {
    IERC20 public immutable token;
    address public immutable operator;

    event Funded(bytes32 indexed loanId, address indexed borrower, uint256 amount);
    event Repaid(bytes32 indexed loanId, address indexed payer, address indexed collections, uint256 amount);
    event Collected(address indexed to, uint256 amount);

    error NotOperator();
    error ZeroAmount();
    error TransferFailed();
    error ZeroAddress();

    constructor(IERC20 token_, address operator_) {
        token = token_;
        operator = operator_;
    }

    /// The borrower repays `amount` of the pool's token for `loanId`, paid straight from the payer to
    /// `collections`; needs an allowance for the pool. The settlement listener credits the loan only
    /// when `collections` is its tenant's verified COLLECTIONS wallet and the token's Transfer backs it.
    function repay(bytes32 loanId, address collections, uint256 amount) external {
        if (amount == 0) revert ZeroAmount();
        if (collections == address(0)) revert ZeroAddress();
        if (!token.transferFrom(msg.sender, collections, amount)) revert TransferFailed();
        emit Repaid(loanId, msg.sender, collections, amount);
    }

    /// The operator sends a loan's principal to the borrower.
    function fund(bytes32 loanId, address borrower, uint256 amount) external {
        if (msg.sender != operator) revert NotOperator();
        if (amount == 0) revert ZeroAmount();
        if (!token.transfer(borrower, amount)) revert TransferFailed();
        emit Funded(loanId, borrower, amount);
    }

    /// The operator moves what the pool holds (the sandbox simulator's repayments to the pool itself) elsewhere.
    function collect(address to, uint256 amount) external {
        if (msg.sender != operator) revert NotOperator();
        if (!token.transfer(to, amount)) revert TransferFailed();
        emit Collected(to, amount);
    }
}
