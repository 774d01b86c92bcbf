// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// The slice of ERC-20 the pool uses.
interface IERC20 {
    function transfer(address to, uint256 amount) external returns (bool);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}

/// svc credit liquidity pool: funds loans and collects repayments in one stablecoin.
/// A loan id is the loan's UUID as 16 bytes, left-aligned in a bytes32 (see loan-id.ts).
contract SvcPool {
    IERC20 public immutable token;
    address public immutable operator;

    event Funded(bytes32 indexed loanId, address indexed borrower, uint256 amount);
    event Repaid(bytes32 indexed loanId, address indexed payer, uint256 amount);
    event Collected(address indexed to, uint256 amount);

    error NotOperator();
    error ZeroAmount();
    error TransferFailed();

    constructor(IERC20 token_, address operator_) {
        token = token_;
        operator = operator_;
    }

    /// The borrower repays `amount` of the pool's token for `loanId`; needs an allowance for the pool.
    function repay(bytes32 loanId, uint256 amount) external {
        if (amount == 0) revert ZeroAmount();
        if (!token.transferFrom(msg.sender, address(this), amount)) revert TransferFailed();
        emit Repaid(loanId, msg.sender, amount);
    }

    /// The operator sends a loan's principal to the borrower.
    function fund(bytes32 loanId, address borrower, uint256 amount) external {
        if (msg.sender != operator) revert NotOperator();
        if (amount == 0) revert ZeroAmount();
        if (!token.transfer(borrower, amount)) revert TransferFailed();
        emit Funded(loanId, borrower, amount);
    }

    /// The operator moves collected repayments to the collections wallet.
    function collect(address to, uint256 amount) external {
        if (msg.sender != operator) revert NotOperator();
        if (!token.transfer(to, amount)) revert TransferFailed();
        emit Collected(to, amount);
    }
}
