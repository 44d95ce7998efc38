"""Model assessment: k-fold cross-validation along a penalty, and bias against variance."""

from __future__ import annotations

import numpy as np

from mathlearn.linear_model import Ridge
from mathlearn.model_selection import (
    bias_variance_decomposition,
    cross_validation_path,
    ridge_estimator_error,
)
from mathlearn.preprocessing import PolynomialBasis
from mathlearn.report import experiment

SECTION = "Model assessment"


@experiment(
    "cv-ridge-lambda",
    title="k-fold cross-validation of ridge regression along the penalty",
    section=SECTION,
    description=(
        "Forty noisy points of a quadratic in two inputs (noise sd 0.5) are fitted by ridge "
        "regression on all quadratic features, for penalties lambda from 1e-4 to 1e4. Ten-fold "
        "cross-validation gives the mean fold loss with its standard error, sqrt(variance / "
        "k), where the variance is the notes' unbiased variance of the fold losses. Notice "
        "that the training error only grows with lambda, while the cross-validated error "
        "first falls (less variance) and then rises (more bias); the one-standard-error rule "
        "picks a larger penalty than the minimum, at a loss within one error bar of it. The "
        "fold losses agree with scikit-learn's cross_val_score on the same folds."
    ),
    source=(
        "Stuttgart 'Introduction to Machine Learning' §2 (slides 2:17-2:18, exercise sheet 2 "
        "(c)); Hastie, Tibshirani and Friedman, The Elements of Statistical Learning, §7.10"
    ),
)
def cv_lambda(ctx):
    import matplotlib.pyplot as plt
    from sklearn.model_selection import KFold, cross_val_score
    from sklearn.pipeline import make_pipeline

    n = 40
    X = ctx.rng.uniform(-1, 1, size=(n, 2))
    y = 1.0 + X[:, 0] - 2.0 * X[:, 1] ** 2 + X[:, 0] * X[:, 1] + 0.5 * ctx.rng.normal(size=n)
    lams = np.logspace(-4, 4, 13)
    model = make_pipeline(PolynomialBasis(degree=2), Ridge())
    folds = KFold(10, shuffle=True, random_state=int(ctx.rng.integers(2**31 - 1)))
    one_se = cross_validation_path(
        model, "ridge__alpha", lams, X, y, cv=folds, rule="one_standard_error"
    )
    path = one_se  # the same folds and losses; the minimum is read off them
    i = int(np.argmin(path.means))
    best = float(lams[i])
    train = [
        float(np.mean((model.set_params(ridge__alpha=a).fit(X, y).predict(X) - y) ** 2))
        for a in lams
    ]
    peer = -cross_val_score(
        model.set_params(ridge__alpha=best),
        X,
        y,
        cv=folds,
        scoring="neg_mean_squared_error",
    )
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.errorbar(
        lams,
        path.means,
        yerr=path.std_errors,
        fmt="-o",
        ms=3,
        capsize=2,
        label="10-fold CV loss -+ 1 SE",
    )
    ax.plot(lams, train, "-s", ms=3, label="training loss")
    ax.axvline(best, color="C2", ls=":", label=f"minimum: {best:.3g}")
    ax.axvline(
        one_se.best_value, color="C3", ls="--", label=f"one-SE rule: {one_se.best_value:.3g}"
    )
    ax.axhline(0.25, color="grey", lw=0.8, label="noise variance 0.25")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("lambda")
    ax.set_ylabel("mean squared error")
    ax.legend(loc="upper left")
    ctx.figure(fig, "The CV loss has a minimum; the training loss does not.")
    ctx.table(
        ["rule", "lambda", "CV loss", "SE", "fold losses = scikit-learn's (max rel. diff.)"],
        [
            [
                "min",
                float(path.best_value),
                float(path.means[i]),
                float(path.std_errors[i]),
                float(np.max(np.abs(path.results[i].fold_losses - peer) / peer)),
            ],
            [
                "one standard error",
                float(one_se.best_value),
                float(one_se.means[one_se.best_index]),
                float(one_se.std_errors[one_se.best_index]),
                "",
            ],
        ],
        "The chosen penalties; the last column compares the fold losses at the minimum with "
        "scikit-learn's cross_val_score on the same folds.",
    )


@experiment(
    "bias-variance-ridge",
    title="Bias and variance of ridge against least squares: closed forms and simulation",
    section=SECTION,
    description=(
        "A fixed design of 20 points and 5 polynomial features, true parameters theta_0 and "
        "noise variance 1. For each penalty lambda (the notes' parametrisation, penalty "
        "sigma^2 lambda) the closed forms give the squared bias ||b||^2 and the variance "
        "tr V of the ridge estimator; 200 simulated training sets give the same quantities "
        "for the predictions at 50 test inputs. Notice that the error of ridge stays below "
        "that of least squares (lambda = 0) for every lambda up to 2 / ||theta_0||^2 (dotted), "
        "where the theory guarantees it, and keeps falling somewhat beyond before bias takes "
        "over."
    ),
    source=(
        "Imperial 'Mathematics for Machine Learning' (bias-variance analysis of estimators, "
        "with the corrected error matrix b b^T + V and ridge variance)"
    ),
)
def bias_variance(ctx):
    import matplotlib.pyplot as plt

    basis = PolynomialBasis(degree=4)
    x = np.linspace(-1, 1, 20)[:, None]
    Phi = basis.fit_transform(x)
    theta0 = np.array([0.5, -1.0, 0.8, 0.6, -0.4])
    s2 = 1.0
    x_test = np.linspace(-1, 1, 50)[:, None]
    Phi_test = basis.transform(x_test)
    lams = np.concatenate([[0.0], np.logspace(-2, 2, 9)])
    bias2, var, mc_bias2, mc_var = [], [], [], []
    for lam in lams:
        err = ridge_estimator_error(Phi, theta0, s2, lam)
        bias2.append(float(err.bias @ err.bias))
        var.append(float(np.trace(err.covariance)))
        bv = bias_variance_decomposition(
            Ridge(alpha=s2 * lam + 1e-12, fit_intercept=False),
            lambda g: (Phi, Phi @ theta0 + np.sqrt(s2) * g.normal(size=len(Phi))),
            Phi_test,
            Phi_test @ theta0,
            s2,
            n_repeats=200,
            random_state=ctx.rng,
        )
        mc_bias2.append(float(bv.bias2.mean()))
        mc_var.append(float(bv.variance.mean()))
    exact_pred = [
        float(np.mean(ridge_estimator_error(Phi, theta0, s2, lam).prediction_error(Phi_test, 0.0)))
        for lam in lams
    ]
    lx = np.where(lams == 0, 1e-3, lams)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    axes[0].plot(lx, bias2, "-o", ms=3, label="||b||^2 (closed form)")
    axes[0].plot(lx, var, "-s", ms=3, label="tr V (closed form)")
    axes[0].plot(lx, np.add(bias2, var), "-k", label="error = ||b||^2 + tr V")
    axes[1].plot(lx, exact_pred, "-k", label="closed form: mean phi^T Error phi")
    axes[1].plot(lx, np.add(mc_bias2, mc_var), "o", ms=4, label="simulation: bias^2 + variance")
    axes[1].plot(lx, mc_var, "s", ms=3, label="simulation: variance")
    for ax in axes:
        ax.axvline(2 / (theta0 @ theta0), color="grey", ls=":", label="2 / ||theta_0||^2")
        ax.set_xscale("log")
        ax.set_xlabel("lambda (lambda = 0 drawn at 1e-3)")
        ax.legend(loc="upper left")
    axes[0].set(title="parameter error", ylabel="E ||theta_hat - theta_0||^2")
    axes[1].set(
        title="prediction error at 50 test inputs (without sigma^2)", ylabel="mean squared error"
    )
    ctx.figure(
        fig,
        "Ridge trades variance for bias. Notice that the simulated points lie on the closed "
        "forms and that for lambda below the dotted line, 2 / ||theta_0||^2, ridge's error is "
        "below least squares' (lambda = 0, the left end).",
    )
    ctx.table(
        ["lambda", "||b||^2", "tr V", "pred. error (closed)", "pred. error (simulated)"],
        [
            [float(lams[i]), bias2[i], var[i], exact_pred[i], mc_bias2[i] + mc_var[i]]
            for i in range(0, len(lams), 2)
        ],
        "Simulated values carry Monte Carlo error of a few per cent (200 training sets).",
    )
