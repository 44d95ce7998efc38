/* Sequential minimal optimisation for the SVM duals (see mathlearn/svm/_smo.py). */

#ifdef _WIN32
#define ML_EXPORT __declspec(dllexport)
#else
#define ML_EXPORT
#endif

ML_EXPORT int smo_abi_version(void) { return 1; }
