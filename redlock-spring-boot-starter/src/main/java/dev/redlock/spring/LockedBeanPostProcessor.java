package dev.redlock.spring;

import java.lang.reflect.Method;
import java.util.Map;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;

/**
 * Puts the lock around every bean method annotated {@link Locked}, as Spring's own {@code @Async}
 * and method validation do: a proxy whose advice is {@link LockedInterceptor}, placed before any
 * other advice (so a {@code @Transactional} method runs its transaction inside the lock). No
 * AspectJ is needed. Each annotation is read and checked when its bean is created, so a mistake
 * fails the context's start.
 */
final class LockedBeanPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor {
  private static final long serialVersionUID = 1L;

  private final transient LockedInterceptor interceptor;
  private transient ListableBeanFactory beans;

  LockedBeanPostProcessor(LockedInterceptor interceptor) {
    this.interceptor = interceptor;
    setProxyTargetClass(true);
    setBeforeExistingAdvisors(true);
    this.advisor =
        new DefaultPointcutAdvisor(
            new AnnotationMatchingPointcut(null, Locked.class, true), interceptor);
  }

  /** Checks every {@link Locked} method registered so far against {@code config}. */
  void checkAgainst(dev.redlock.config.RedlockConfig config) {
    interceptor.checkAgainst(config);
  }

  @Override
  public void setBeanFactory(BeanFactory beanFactory) {
    super.setBeanFactory(beanFactory);
    if (beanFactory instanceof ListableBeanFactory listable) {
      this.beans = listable;
    }
  }

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    Class<?> type = AopUtils.getTargetClass(bean);
    Map<Method, Locked> locked =
        MethodIntrospector.selectMethods(
            type,
            (MethodIntrospector.MetadataLookup<Locked>)
                method -> AnnotatedElementUtils.findMergedAnnotation(method, Locked.class));
    if (locked.isEmpty()) {
      return bean;
    }
    try {
      for (Method method : locked.keySet()) {
        interceptor.register(method);
      }
      if (beans != null
          && beans.getBeanNamesForType(dev.redlock.Redlock.class, true, false).length == 0) {
        throw new RedlockSettingsException(
            "@Locked methods need a Redlock bean, and there is none",
            "Set redlock.nodes (or redlock.store=jdbc), or define a Redlock bean; note that"
                + " redlock.enabled=false turns the starter off.",
            null);
      }
    } catch (RedlockSettingsException e) {
      throw new BeanCreationException(beanName, e.getMessage(), e);
    } catch (IllegalArgumentException | IllegalStateException e) {
      throw new BeanCreationException(
          beanName,
          e.getMessage(),
          new RedlockSettingsException(e.getMessage(), RedlockSettingsException.FIX_ANNOTATION, e));
    }
    return super.postProcessAfterInitialization(bean, beanName);
  }
}
