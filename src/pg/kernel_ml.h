/*
 * kernel_ml.h - kernel_ml's settings (kernel_ml.c).
 */
#ifndef KM_KERNEL_ML_H
#define KM_KERNEL_ML_H

/* Define every kernel_ml.* setting and reserve the prefix (from _PG_init). */
void		km_define_settings(void);

#endif							/* KM_KERNEL_ML_H */
