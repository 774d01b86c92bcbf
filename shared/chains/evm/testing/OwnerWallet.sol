// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// A minimal ERC-1271 smart-contract wallet for tests: one owner key, whose
/// ECDSA signature over the hash is the wallet's signature.
contract OwnerWallet {
    address public immutable owner;

    constructor(address owner_) {
        owner = owner_;
    }

    /// ERC-1271: 0x1626ba7e iff `sig` (r ‖ s ‖ v) recovers to the owner from `hash`.
    function isValidSignature(bytes32 hash, bytes calldata sig) external view returns (bytes4) {
        if (sig.length != 65) return 0xffffffff;
        bytes32 r = bytes32(sig[0:32]);
        bytes32 s = bytes32(sig[32:64]);
        uint8 v = uint8(sig[64]);
        if (v < 27) v += 27;
        address signer = ecrecover(hash, v, r, s);
        return signer != address(0) && signer == owner ? bytes4(0x1626ba7e) : bytes4(0xffffffff);
    }
}

/// Deploys OwnerWallets at CREATE2 addresses known before deployment, so a
/// wallet can sign counterfactually (ERC-6492) with this factory's calldata.
contract OwnerWalletFactory {
    /// Deploys the owner's wallet for `salt` (or returns it when it exists).
    function createAccount(address owner, bytes32 salt) external returns (address) {
        address predicted = addressOf(owner, salt);
        if (predicted.code.length > 0) return predicted;
        return address(new OwnerWallet{salt: salt}(owner));
    }

    /// The CREATE2 address of the owner's wallet for `salt`.
    function addressOf(address owner, bytes32 salt) public view returns (address) {
        bytes32 initCodeHash = keccak256(abi.encodePacked(type(OwnerWallet).creationCode, abi.encode(owner)));
        return address(uint160(uint256(keccak256(abi.encodePacked(bytes1(0xff), address(this), salt, initCodeHash)))));
    }
}
