package dev.ebb.operator.retire;

import java.util.Optional;

/**
 * One retirement as status.retirements[] keeps it: the machine's state and what the choice and the retry rules need
 * beside it.
 *
 * @param chosenBecause why the replica was chosen, kept as it was written when the retirement began
 * @param retryToken the retry annotation's value when it began, so the same value never starts it again
 * @param attempt how many retirements of this replica ran in a row, this one included
 */
public record RetirementRecord(Retirement retirement, String chosenBecause, Optional<String> retryToken, int attempt) {

    public boolean targets(String role, int ordinal) {
        return retirement.role().equals(role) && retirement.ordinal() == ordinal;
    }

    public boolean underWay() {
        return !retirement.state().ended();
    }

    public RetirementRecord after(Retirement next) {
        return new RetirementRecord(next, chosenBecause, retryToken, attempt);
    }
}
