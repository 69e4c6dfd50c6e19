package dev.redlock.spring;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Shows a {@link RedlockSettingsException} in Spring Boot's "APPLICATION FAILED TO START" report:
 * its message as the description, and what to do, instead of a stack of bean creation failures.
 */
final class RedlockFailureAnalyzer extends AbstractFailureAnalyzer<RedlockSettingsException> {
  @Override
  protected FailureAnalysis analyze(Throwable rootFailure, RedlockSettingsException cause) {
    return new FailureAnalysis(cause.getMessage(), cause.action(), cause);
  }
}
